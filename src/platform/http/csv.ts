import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { textResponse } from './schemas.js';

/*
 * CSV downloads: RFC 4180 (CRLF line ends; a field holding a quote, comma or line break quoted,
 * its quotes doubled), with spreadsheet formula injection neutralised: a text cell starting with
 * = + - @, a tab or a carriage return gets a single quote in front, so a spreadsheet shows it as
 * text instead of running it (OWASP's advice). Numbers are written as numbers.
 */

export type CsvValue = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: CsvValue): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** A CSV download in the API reference. */
export function csvResponse(description: string) {
  return textResponse('text/csv', description);
}

/**
 * Answers `rows` as a CSV download named `filename`, a header row first, streamed as the rows
 * arrive. The first row is read before anything is sent, so a failure there (the database away)
 * still answers as an error; one later can only cut the download short.
 */
export async function sendCsv(
  reply: FastifyReply,
  filename: string,
  header: readonly string[],
  rows: AsyncIterable<readonly CsvValue[]>,
): Promise<FastifyReply> {
  const iterator = rows[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* lines() {
    try {
      yield csvLine(header);
      if (first.done) return;
      yield csvLine(first.value);
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        yield csvLine(next.value);
    } finally {
      // A download the client left stops reading the database.
      await iterator.return?.();
    }
  }
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(lines(), { objectMode: false }));
}
