import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';

/** One message, ready to go. */
export interface OutgoingMail {
  /** Stable across retries: the Message-ID and the outbox file name are made from it. */
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  date: Date;
}

export interface Mailer {
  /** Where messages go: an SMTP server, or files in a local folder. */
  readonly transport: 'smtp' | 'outbox';
  /** Resolves once the SMTP server accepted the message or its file is in place. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Well under the worker's lease, so a send never outlives the claim it was made under. */
export const SEND_TIMEOUT_MS = 60_000;

/**
 * SMTP through nodemailer when a server is configured; otherwise a local outbox folder with
 * one RFC 5322 `.eml` file per message, for development and single-node setups without mail.
 */
export function createMailer(options: { smtpUrl: string | null; from: string; outboxDir: string }): Mailer {
  const domain = /@([^\s@<>]+)>?$/.exec(options.from)?.[1] ?? 'localhost';
  const fields = (mail: OutgoingMail) => ({
    from: options.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    date: mail.date,
    messageId: `<${mail.id}@${domain}>`,
  });

  if (options.smtpUrl) {
    // Options written in the URL's query (pool, requireTLS, …) take precedence over these.
    const smtp = nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
    return {
      transport: 'smtp',
      async send(mail) {
        await smtp.sendMail({ ...fields(mail), signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
      },
      close: () => smtp.close(),
    };
  }

  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  let folderReady: Promise<unknown> | null = null;
  return {
    transport: 'outbox',
    async send(mail) {
      folderReady ??= fs.mkdir(options.outboxDir, { recursive: true }).catch((error) => {
        folderReady = null;
        throw error;
      });
      await folderReady;
      const { message } = await composer.sendMail(fields(mail));
      // Written aside and renamed into place: a reader of the folder never sees half a message,
      // and a retry of the same notification replaces its file instead of adding a second one.
      const file = path.join(options.outboxDir, `${mail.id}.eml`);
      const partial = `${file}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await fs.writeFile(partial, message as Buffer);
        await fs.rename(partial, file);
      } catch (error) {
        await fs.rm(partial, { force: true });
        throw error;
      }
    },
    close: () => composer.close(),
  };
}
