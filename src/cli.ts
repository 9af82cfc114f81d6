#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { pino } from 'pino';
import type { Modules } from './app/modules.js';
import { addApiKeyCommands } from './cli/api-key-commands.js';
import { askNewPassword, PasswordNotGiven } from './cli/password-prompt.js';
import { formatTable, instant } from './cli/table.js';
import { type Config, ConfigError, parseConfig } from './platform/config.js';
import { createLog, type Log } from './platform/log.js';
import { fromRoot } from './platform/project-root.js';
import { lowerThreadPoolPriority } from './platform/thread-pool.js';

// The app (Fastify, pg, http) is imported only once tracing, when configured, has started, so
// its instrumentations see those modules load (see platform/tracing.ts).
const service = () => import('./app/service.js');
/** What stopping may take beyond SHUTDOWN_TIMEOUT_MS before `serve` exits regardless. */
const STOP_CLOSE_GRACE_MS = 10_000;
/** The bounds registration puts on a password (users/schemas.ts). */
const PASSWORD_LENGTH = { min: 8, max: 256 };
const { version } = JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as {
  version: string;
};

const program = new Command()
  .name('licensing')
  .description('Licensing, catalog and checkout service. Settings come from the environment (see README).')
  .version(version, '-V, --version', 'print the version and exit')
  .showHelpAfterError()
  // Thrown rather than exited on, so that a usage error (an unknown option, an id that is not a
  // UUID) exits 2, as a wrong setting does; the subcommands inherit it.
  .exitOverride();

program
  .command('serve', { isDefault: true })
  .description('apply migrations and start the core API (PORT) and the checkout host (PAY_PORT)')
  .action(async () => {
    const config = loadConfig();
    const log = createLog(config);
    // A promise nobody awaited that fails is a bug to report, not a reason to stop serving.
    process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'process.unhandled_rejection'));
    const tracing = config.otlpEndpoint
      ? await (await import('./platform/tracing.js')).startTracing({
          endpoint: config.otlpEndpoint,
          serviceName: config.otelServiceName,
        })
      : null;
    await lowerThreadPoolPriority({ nice: config.threadPoolNice, size: config.threadPoolSize }, log);
    const running = await (await service()).startService(config, log);
    let stopping = false;
    const shutdown = (signal: string) => {
      // The other signal (SIGINT after SIGTERM, say) cuts the drain short; the stop goes on.
      if (stopping) {
        running.skipDrain();
        return;
      }
      stopping = true;
      log.info({ signal }, 'server.stopping');
      // After the drain, requests get SHUTDOWN_TIMEOUT_MS; the rest of stopping (a webhook send
      // in hand, closing connections) gets STOP_CLOSE_GRACE_MS more. A database that stopped
      // answering would otherwise hold the process until it is killed, with nothing said.
      setTimeout(
        () => {
          log.error({ stage: running.stopStage }, 'server.stop.timed_out');
          process.exit(1);
        },
        config.shutdownDrainMs + config.shutdownTimeoutMs + STOP_CLOSE_GRACE_MS,
      ).unref();
      running
        .stop()
        .then(() => tracing?.shutdown())
        .then(
          () => process.exit(0),
          (err) => {
            log.error({ err }, 'server.stop.failed');
            process.exit(1);
          },
        );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    // For a person at a terminal only: the log (stdout) stays one JSON object a line for log
    // shippers, and its server.started line carries the same addresses.
    if (process.stderr.isTTY) {
      process.stderr.write(
        `core API on ${running.coreUrl}/v1  ·  checkout host on ${running.payUrl}` +
          (running.metricsUrl ? `  ·  metrics on ${running.metricsUrl}` : '') +
          (running.healthUrl ? `  ·  probes on ${running.healthUrl}` : '') +
          '\n',
      );
    }
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const config = loadConfig();
    const log = commandLog(config);
    const { openDatabase } = await import('./platform/db/database.js');
    const { migrate } = await import('./platform/db/migrate.js');
    const database = await openDatabase(config);
    try {
      if (database.createdFrom === 'template') {
        console.log("created the embedded database from the build's template, every migration applied");
      }
      const applied = await migrate(database, log);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
    } finally {
      await database.close();
    }
  });

const admin = program.command('admin').description('manage admin accounts');
admin
  .command('create')
  .description('create an admin account, or promote an existing account and set its password')
  .requiredOption('--email <email>', 'e-mail of the admin account')
  .option(
    '--password <password>',
    'password to set (default: ADMIN_PASSWORD from the environment, else asked for on a terminal)',
  )
  .action(async (options: { email: string; password?: string }) => {
    const config = loadConfig();
    const password = options.password ?? config.adminPassword ?? (await askPasswordOnTerminal());
    if (!password || password.length < PASSWORD_LENGTH.min || password.length > PASSWORD_LENGTH.max) {
      console.error(
        `admin create: give --password (or ADMIN_PASSWORD) of ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters, or run it on a terminal to be asked`,
      );
      process.exit(2);
    }
    const modules = await (await service()).openModules(config, commandLog(config));
    try {
      const { user, outcome } = await modules.users.ensureAdmin({
        email: options.email,
        password,
        resetPassword: true,
      });
      console.log(`${outcome === 'created' ? 'created' : 'promoted'} admin ${user.email} (${user.id})`);
    } finally {
      await modules.database.close();
    }
  });

const keys = program
  .command('keys')
  .description('manage the keys that sign license tokens, license files and revocation lists');
keys
  .command('rotate')
  .description(
    'publish new token signing keys (RS256 and EdDSA); they sign after a short delay, old keys stay published until their tokens expire',
  )
  .option(
    '--offline',
    'replace the offline keys instead (license files and revocation lists), only if they may have leaked: every offline machine then needs the new key set',
  )
  .action(async (options: { offline?: boolean }) => {
    const modules = await openCommandModules();
    try {
      const purpose = options.offline ? 'offline' : 'token';
      const { kids, activatesAt } = await modules.keyRing.rotate(purpose);
      for (const [algorithm, kid] of Object.entries(kids)) {
        console.log(
          `new ${purpose === 'offline' ? 'offline ' : ''}${algorithm} key ${kid} published; it signs from ${activatesAt.toISOString()}`,
        );
      }
      if (purpose === 'offline') {
        console.log(
          'offline machines accept what it signs once they hold the new key set (GET /v1/licenses/jwks)',
        );
      }
    } finally {
      await modules.database.close();
    }
  });

keys
  .command('list')
  .description(
    'list the signing keys, retired ones too: kid, purpose, algorithm, dates and state (pending, signing, verifying, retired)',
  )
  .option('--json', 'print them as JSON, one array')
  .action(async (options: { json?: boolean }) => {
    const modules = await openCommandModules();
    try {
      const listed = await modules.keyRing.list();
      if (options.json) {
        console.log(JSON.stringify(listed, null, 2));
        return;
      }
      if (listed.length === 0) {
        console.error('no signing keys yet: `licensing serve` makes them on its first start');
        return;
      }
      console.log(
        formatTable(
          ['KID', 'PURPOSE', 'ALGORITHM', 'STATE', 'PUBLISHED', 'ACTIVATES', 'UNPUBLISHES'],
          listed.map((key) => [
            key.kid,
            key.purpose,
            key.algorithm,
            key.state,
            instant(key.publishedAt),
            instant(key.activatesAt),
            instant(key.unpublishAt),
          ]),
        ),
      );
    } finally {
      await modules.database.close();
    }
  });

addApiKeyCommands(program, openCommandModules);

/**
 * On a terminal, the password is asked for (twice, hidden); elsewhere nobody could answer, and
 * `admin create` refuses as it did before there was a question.
 */
async function askPasswordOnTerminal(): Promise<string | undefined> {
  if (!process.stdin.isTTY) return undefined;
  try {
    return await askNewPassword({ input: process.stdin, output: process.stderr }, PASSWORD_LENGTH);
  } catch (error) {
    if (!(error instanceof PasswordNotGiven)) throw error;
    console.error(`admin create: ${error.message}`);
    process.exit(1);
  }
}

/** Every module over the storage the settings name, for a one-shot command; it closes them. */
async function openCommandModules(): Promise<Modules> {
  const config = loadConfig();
  return (await service()).openModules(config, commandLog(config));
}

/**
 * The log of a one-shot command, on stderr: stdout carries what the command answers (a key, a
 * table, JSON for a script), which its log lines would break up.
 */
function commandLog(config: Config): Log {
  return createLog(config, pino.destination({ dest: 2, sync: true }));
}

function loadConfig(): Config {
  try {
    return parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

program.parseAsync().catch((error: unknown) => {
  // Commander has printed the usage error, or the help or version asked for.
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  // A setting found wrong only once storage is open (the key that seals the signing keys).
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
