/**
 * Whether a delete failed because rows elsewhere still reference the row: SQLSTATE 23503
 * (foreign key, NO ACTION) or 23001 (ON DELETE RESTRICT). Both drivers expose the code.
 */
export function isStillReferenced(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23503' || code === '23001';
}
