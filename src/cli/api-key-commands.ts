import { type Command, InvalidArgumentError } from 'commander';
import type { Modules } from '../app/modules.js';
import { actAsAppOwner } from '../app/operator.js';
import { AppError } from '../platform/errors.js';
import type { Principal } from '../platform/http/principal.js';
import { isUuid } from '../platform/ids.js';
import { formatTable, instant } from './table.js';

/** The API's largest page: `api-keys list` reads every page. */
const PAGE = 100;

/**
 * `licensing api-keys create|list|revoke`: the operator manages any seller's app's keys, through
 * the service calls the routes make. `openModules` opens the storage the settings name.
 */
export function addApiKeyCommands(program: Command, openModules: () => Promise<Modules>): void {
  const apiKeys = program
    .command('api-keys')
    .description("manage an app's API keys, as its owner does in the API (any seller's app)");
  apiKeys
    .command('create')
    .description('create an API key for an app; the key is printed here only, it cannot be read again')
    .requiredOption('--app <appId>', 'id of the app', uuid)
    .requiredOption('--name <name>', 'what the key is for (1 to 100 characters)', keyName)
    .option('--json', 'print the created key as JSON')
    .action((options: { app: string; name: string; json?: boolean }) =>
      asAppOwner(openModules, options.app, async (modules, owner) => {
        const created = await modules.apiKeys.create(owner, options.app, { name: options.name });
        if (options.json) {
          console.log(JSON.stringify(created, null, 2));
          return;
        }
        console.log(`created API key "${created.name}" for app ${created.appId}`);
        console.log(`id:     ${created.id}`);
        console.log(`prefix: ${created.prefix}`);
        console.log(`key:    ${created.key}`);
        console.log('The key is shown only here: store it now, it cannot be read again.');
      }),
    );
  apiKeys
    .command('list')
    .description("list an app's API keys: prefixes and dates, never the keys")
    .requiredOption('--app <appId>', 'id of the app', uuid)
    .option('--json', 'print them as JSON, one array')
    .action((options: { app: string; json?: boolean }) =>
      asAppOwner(openModules, options.app, async (modules, owner) => {
        const listed = [];
        for (let offset = 0; ; offset += PAGE) {
          const page = await modules.apiKeys.list(owner, options.app, { limit: PAGE, offset });
          listed.push(...page.apiKeys);
          if (page.apiKeys.length < PAGE) break;
        }
        if (options.json) {
          console.log(JSON.stringify(listed, null, 2));
          return;
        }
        console.log(
          formatTable(
            ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'],
            listed.map((key) => [
              key.id,
              key.name,
              key.prefix,
              instant(key.createdAt),
              instant(key.lastUsedAt, 'never'),
              instant(key.revokedAt),
            ]),
          ),
        );
      }),
    );
  apiKeys
    .command('revoke')
    .description('revoke an API key: it is refused from now on')
    .requiredOption('--app <appId>', 'id of the app', uuid)
    .argument('<keyId>', 'id of the key (api-keys list shows it)', uuid)
    .action((keyId: string, options: { app: string }) =>
      asAppOwner(openModules, options.app, async (modules, owner) => {
        try {
          await modules.apiKeys.revoke(owner, options.app, keyId);
        } catch (error) {
          if (!(error instanceof AppError && error.code === 'not_found')) throw error;
          console.error(`api-keys revoke: app ${options.app} has no API key ${keyId}`);
          process.exitCode = 1;
          return;
        }
        console.log(`revoked API key ${keyId} of app ${options.app}`);
      }),
    );
}

/**
 * Opens storage and runs `act` as the owner of app `appId` (operator.ts), then closes it. An app
 * that does not exist exits 1, naming it.
 */
async function asAppOwner(
  openModules: () => Promise<Modules>,
  appId: string,
  act: (modules: Modules, owner: Principal) => Promise<void>,
) {
  const modules = await openModules();
  try {
    const owner = await actAsAppOwner(modules, appId);
    if (!owner) {
      console.error(`api-keys: no app ${appId}`);
      process.exitCode = 1;
      return;
    }
    await act(modules, owner);
  } finally {
    await modules.database.close();
  }
}

/** An id as commander takes it: a UUID, else a usage error naming the option or argument. */
function uuid(value: string): string {
  if (!isUuid(value)) throw new InvalidArgumentError('It must be a UUID.');
  return value.toLowerCase();
}

/** The bounds the API puts on a key's name (api-keys/schemas.ts). */
function keyName(value: string): string {
  if (value.trim() === '' || value.length > 100)
    throw new InvalidArgumentError('It must have 1 to 100 characters.');
  return value;
}
