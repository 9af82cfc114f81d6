import type { Principal } from '../platform/http/principal.js';
import type { Modules } from './modules.js';

/**
 * The operator at the command line acts on an app as its owner would from a signed-in session,
 * so what it does runs through the same service calls as the routes, with the same checks and
 * logs. Null when there is no such app, or its owner's account is deleted.
 */
export async function actAsAppOwner(
  modules: Pick<Modules, 'apps' | 'users'>,
  appId: string,
): Promise<Principal | null> {
  const app = await modules.apps.findAnyApp(appId);
  const owner = app && (await modules.users.findActive(app.user_id));
  if (!owner) return null;
  return { userId: owner.id, role: owner.role, tier: owner.tier, credential: { kind: 'user_token' } };
}
