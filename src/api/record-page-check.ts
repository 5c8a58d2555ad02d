import type * as z from 'zod';
import type { RecordListResponse } from './records.ts';

/**
 * What a client validates a response with: an endpoint's zod schema, or a check of its own that
 * accepts exactly what the schema accepts (see `Endpoint.check`).
 */
export interface ResponseCheck {
  safeParse(body: unknown): { success: true; data: unknown } | { success: false; error: { issues: z.core.$ZodIssue[] } };
}

const DIGITS = /^[0-9]+$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `recordListResponseSchema`, checked in place in one pass. A list page is the bulk of every
 * backfill: zod would build a copy of each record (and walk it) only to hand back the same
 * values, so the client checks the page as it is and keeps it. Record values are only checked to
 * be objects here; their types are checked where their fields are known (the mirror's encoding).
 * test/api/record-page-check.test.ts holds it to the schema.
 */
export const recordListResponseCheck: ResponseCheck = {
  safeParse(body) {
    const issues: z.core.$ZodIssue[] = [];
    const issue = (path: PropertyKey[], message: string, input: unknown) => {
      issues.push({ code: 'custom', path, message, input });
    };
    if (!isObject(body)) {
      issue([], 'expected an object', body);
      return { success: false, error: { issues } };
    }
    const { data } = body;
    if (!Array.isArray(data)) {
      issue(['data'], 'expected an array', data);
    } else {
      for (let i = 0; i < data.length; i++) {
        const record: unknown = data[i];
        if (!isObject(record)) {
          issue(['data', i], 'expected an object', record);
          continue;
        }
        const { id, values } = record;
        if (typeof id !== 'string' || !DIGITS.test(id)) issue(['data', i, 'id'], 'expected a string of digits', id);
        if (!isObject(values)) issue(['data', i, 'values'], 'expected an object of field name to value', values);
      }
    }
    const info = body['page_info'];
    if (!isObject(info)) {
      issue(['page_info'], 'expected an object', info);
    } else {
      if (typeof info['has_more'] !== 'boolean') issue(['page_info', 'has_more'], 'expected a boolean', info['has_more']);
      for (const key of ['limit', 'offset']) {
        if (typeof info[key] !== 'number') issue(['page_info', key], 'expected a number', info[key]);
      }
    }
    return issues.length === 0 ? { success: true, data: body as RecordListResponse } : { success: false, error: { issues } };
  },
};
