import type { Authenticate } from '../../platform/http/principal.js';
import type { ApiKeyService } from '../api-keys/index.js';
import type { UserService, UserTokenSigner } from '../users/index.js';

/**
 * Resolves a bearer token to the caller: an app API key, or a user session token whose
 * account still exists. Role and tier are read live, so an admin's change applies at once.
 */
export function createAuthenticator(deps: {
  tokens: Pick<UserTokenSigner, 'verify'>;
  users: Pick<UserService, 'findActive'>;
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
}): Authenticate {
  return async (bearer) => {
    if (!bearer.includes('.')) return deps.apiKeys.authenticate(bearer);
    const userId = await deps.tokens.verify(bearer);
    if (!userId) return null;
    const user = await deps.users.findActive(userId);
    if (!user) return null;
    return { userId: user.id, role: user.role, tier: user.tier, credential: { kind: 'user_token' } };
  };
}
