import { questionMarkSql } from './dialects.ts';
import { catalogEntry } from './mirror-snapshot.ts';
import { field } from './schema.ts';
import type { SyncHarness } from './sync-harness.ts';

/** What `editsWaitingForARefusedRow` left in the outbox. */
export interface WaitingScenario {
  /** The company inserted here, whose create upstream refused: its temporary id and its insert entry. */
  company: { id: number; insertEntryId: number };
  /** The deal upstream had before, whose `company` was set to the local company. */
  deal: number;
  /** The deal upstream also had, whose title was edited after the last push. */
  other: number;
  /** SQL names of crm.companies and crm.deals, quoted for the mirror. */
  tables: { companies: string; deals: string };
}

/**
 * crm.companies and crm.deals (`company` references companies), two deals upstream; then, in
 * SQL, a company inserted here with a value upstream refuses, a deal inserted here pointing at
 * it and an upstream deal updated to point at it; a push (its create fails, the two deals'
 * edits wait for it); an edit of the company's name, and a push (it waits for its own row's
 * create); and last, with no push after it, an edit of the other deal's title. The outbox then
 * holds 1 failed entry (the company's insert) and 4 pending ones, 3 of which wait for the
 * company's create (docs/mirror.md, "States of an edit").
 */
export async function editsWaitingForARefusedRow(h: SyncHarness): Promise<WaitingScenario> {
  await h.upstream.createModule('crm');
  await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [
    field('name', 'string'), field('stage', 'choice', { options: [{ name: 'lead' }] }),
  ]);
  await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [field('title', 'string'), field('company', 'reference', { refTableName: 'companies' })]);
  const [deal, other] = await h.upstream.createRecords('crm', 'deals', [{ title: 'old' }, { title: 'other' }]);
  await h.sync();
  const sql = questionMarkSql(h.tm);
  const tables = {
    companies: h.tm.table((await catalogEntry(h.tm, 'crm', 'companies'))!.sqlName),
    deals: h.tm.table((await catalogEntry(h.tm, 'crm', 'deals'))!.sqlName),
  };
  await sql(`INSERT INTO ${tables.companies} (name, stage) VALUES (?, ?)`, ['Acme', 'no-such-option']);
  const [company] = await sql<{ id: number | string }>(`SELECT id FROM ${tables.companies} WHERE name = ?`, ['Acme']);
  const id = Number(company!.id);
  await sql(`INSERT INTO ${tables.deals} (title, company) VALUES (?, ?)`, ['new', id]);
  await sql(`UPDATE ${tables.deals} SET company = ? WHERE id = ?`, [id, Number(deal)]);
  await h.sync();
  await sql(`UPDATE ${tables.companies} SET name = ? WHERE id = ?`, ['Acme Inc', id]);
  await h.sync();
  await sql(`UPDATE ${tables.deals} SET title = ? WHERE id = ?`, ['other, edited', Number(other)]);
  return { company: { id, insertEntryId: -id }, deal: Number(deal), other: Number(other), tables };
}
