import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A local SMTP server that keeps what it receives and refuses recipients when told. */
export interface SmtpSink {
  url: string;
  messages: { to: string[]; raw: string }[];
  /** Recipients get a temporary refusal (451) while this is set. */
  refuse: boolean;
  /** Messages whose data has begun to arrive (kept or not). */
  started: number;
  close(): Promise<void>;
}

/**
 * `acceptAfterMs` holds each accepted message that long before answering 250, so a sender can be
 * stopped between the message arriving and its acceptance (the message is kept either way).
 */
export async function startSmtpSink(options: { acceptAfterMs?: number } = {}): Promise<SmtpSink> {
  const sink: Omit<SmtpSink, 'url' | 'close'> = { messages: [], refuse: false, started: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (!sink.refuse) return callback();
      callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 }));
    },
    onData(stream, session, callback) {
      sink.started++;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        sink.messages.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        if (options.acceptAfterMs) setTimeout(callback, options.acceptAfterMs);
        else callback();
      });
    },
  });
  // A client that dies mid-session (a killed sender) resets its connection: not the sink's failure.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(resolve)),
  });
}
