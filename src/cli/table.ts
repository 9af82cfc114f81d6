/** Rows under a header, each column as wide as its widest cell: what the list commands print. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** An instant to the second, as the tables show it; `none` for a missing one. */
export function instant(date: Date | string | null, none = '-'): string {
  if (date === null) return none;
  return new Date(date).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
