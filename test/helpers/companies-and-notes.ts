import type { UpstreamWorkspace } from './workspace.ts';

/**
 * Upstream `crm.companies` (Acme, Globex) and `crm.notes`, whose `company` field references
 * companies, with one note on Acme: two tables where one holds references to the other.
 */
export async function companiesAndNotes(ws: UpstreamWorkspace): Promise<{ acme: number; note: number }> {
  await ws.createModule('crm');
  await ws.createTable('crm', 'companies', { hasHistory: true }, [{ name: 'name', type: 'string', labels: { '': 'Name' } }]);
  await ws.createTable('crm', 'notes', { hasHistory: true }, [
    { name: 'body', type: 'string', labels: { '': 'Body' } },
    { name: 'company', type: 'reference', labels: { '': 'Company' }, refTableName: 'companies' },
  ]);
  const [acme] = (await ws.createRecords('crm', 'companies', [{ name: 'Acme' }, { name: 'Globex' }])).map(Number) as [number];
  const [note] = (await ws.createRecords('crm', 'notes', [{ body: 'n1', company: acme }])).map(Number) as [number];
  return { acme, note };
}
