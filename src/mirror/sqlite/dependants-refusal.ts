/**
 * SQLite checks no view when one is dropped, but ALTER TABLE (a column renamed or dropped, a
 * table renamed) reads every view and trigger of the file again and refuses when one no longer
 * reads: "error in view mine: no such table: main.crm__deals_v". Views are looked up by name at
 * each query, so nothing else of a user's stands in a schema change's way.
 */
export function isDependantsRefusal(error: unknown): boolean {
  return error instanceof Error && /^error in (view|trigger) /.test(error.message);
}
