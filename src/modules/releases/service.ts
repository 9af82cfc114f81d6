import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { ReleaseChannel, ReleaseRow } from '../../platform/db/schema.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import { recordEvent } from '../events/index.js';
import { releaseDownloads } from './release-downloads.js';
import * as store from './store.js';
import { parseVersion } from './version-order.js';

export interface ReleaseServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  apps: Pick<AppService, 'requireOwnedApp'>;
}

export interface ReleaseInput {
  version: string;
  channel?: ReleaseChannel;
  notes?: string;
  requiredFeatures?: string[];
}

export type Release = ReturnType<typeof toRelease>;
export type ReleaseService = ReturnType<typeof createReleaseService>;

/**
 * The seller's releases of an app: drafts they edit, publish and delete, and published releases
 * they may yank. Yanking is final: a yanked release is never offered again, and its version stays
 * taken, so a client that saw it never meets another build under the same number.
 */
export function createReleaseService({ db, clock, log, apps }: ReleaseServiceDeps) {
  /** The version and the channel a create or a change asks for, checked together. */
  function versionAndChannel(version: string, channel: ReleaseChannel | undefined) {
    const parsed = parseVersion(version);
    if (!parsed) {
      throw invalidField('version', 'must be a semantic version such as 1.4.0 or 2.0.0-beta.3');
    }
    const chosen = channel ?? parsed.impliedChannel;
    if (!chosen) {
      throw invalidField(
        'channel',
        'is required for a pre-release whose tag names no channel (rc, beta, alpha, dev)',
      );
    }
    return { version: parsed.version, versionOrder: parsed.order, channel: chosen };
  }

  /** The app's release, when the caller may act on the app (as requireOwnedApp decides); else 404. */
  async function requireRelease(principal: Principal, appId: string, releaseId: string) {
    await apps.requireOwnedApp(principal, appId);
    const row = await store.findRelease(db, appId, releaseId);
    if (!row) throw notFound('Release');
    return row;
  }

  /** Moves a release to published or yanked in one transaction with its event. */
  async function transition(
    principal: Principal,
    appId: string,
    releaseId: string,
    to: 'published' | 'yanked',
  ) {
    await apps.requireOwnedApp(principal, appId);
    const now = clock.now();
    const outcome = await db.transaction().execute(async (trx) => {
      const row = await store.findRelease(trx, appId, releaseId, { forUpdate: true });
      if (!row) throw notFound('Release');
      // Asked again, an action already done answers the release as it stands.
      if (row.status === to) return { row, changed: false };
      if (to === 'published' && row.status === 'yanked') {
        throw new AppError('release_yanked', 'This release was yanked; publish a new version instead');
      }
      if (to === 'yanked' && row.status === 'draft') {
        throw new AppError('release_not_draft', 'A draft was never offered: delete it instead of yanking it');
      }
      const updated = (await store.updateRelease(trx, row.id, {
        status: to,
        ...(to === 'published' ? { publishedAt: now } : { yankedAt: now }),
        now,
      })) as ReleaseRow;
      await recordEvent(trx, {
        type: to === 'published' ? 'release.published' : 'release.yanked',
        userId: updated.user_id,
        appId: updated.app_id,
        data: toRelease(updated),
        occurredAt: now,
      });
      return { row: updated, changed: true };
    });
    if (outcome.changed) log.info({ appId, releaseId, version: outcome.row.version }, `release.${to}`);
    return toRelease(outcome.row);
  }

  return {
    requireRelease,

    async create(
      principal: Principal,
      appId: string,
      input: ReleaseInput,
      answer?: IdempotentAnswer<Release>,
    ) {
      const app = await apps.requireOwnedApp(principal, appId);
      const chosen = versionAndChannel(input.version, input.channel);
      const now = clock.now();
      return transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.insertRelease(trx, {
          id: newId(),
          userId: app.user_id,
          appId: app.id,
          ...chosen,
          notes: input.notes ?? '',
          requiredFeatures: input.requiredFeatures ?? [],
          now,
        });
        if (!row) throw releaseExists(chosen.version);
        return toRelease(row);
      });
    },

    async get(principal: Principal, appId: string, releaseId: string) {
      return toRelease(await requireRelease(principal, appId, releaseId));
    },

    async list(principal: Principal, appId: string, filter: store.ReleaseFilter, page: Page) {
      await apps.requireOwnedApp(principal, appId);
      const { rows, total } = await store.listReleases(db, appId, filter, page);
      return { releases: rows.map(toRelease), total, ...page };
    },

    /**
     * Notes, channel and required features change at any time before a yank; the version only
     * while the release is a draft (a published version is what clients already compared with).
     */
    async update(principal: Principal, appId: string, releaseId: string, changes: Partial<ReleaseInput>) {
      await apps.requireOwnedApp(principal, appId);
      const now = clock.now();
      const row = await db.transaction().execute(async (trx) => {
        const before = await store.findRelease(trx, appId, releaseId, { forUpdate: true });
        if (!before) throw notFound('Release');
        if (before.status === 'yanked') {
          throw new AppError('release_yanked', 'A yanked release does not change');
        }
        const versionChanges =
          changes.version !== undefined
            ? versionAndChannel(changes.version, changes.channel ?? before.channel)
            : undefined;
        if (
          versionChanges &&
          versionChanges.versionOrder !== before.version_order &&
          before.status !== 'draft'
        ) {
          throw new AppError(
            'release_not_draft',
            'The version of a published release does not change; publish a new release',
          );
        }
        const updated = await store.updateRelease(trx, before.id, {
          ...(versionChanges
            ? { version: versionChanges.version, versionOrder: versionChanges.versionOrder }
            : {}),
          ...(changes.channel !== undefined ? { channel: changes.channel } : {}),
          ...(changes.notes !== undefined ? { notes: changes.notes } : {}),
          ...(changes.requiredFeatures !== undefined ? { requiredFeatures: changes.requiredFeatures } : {}),
          now,
        });
        if (!updated) throw releaseExists(versionChanges?.version ?? before.version);
        return updated;
      });
      return toRelease(row);
    },

    /** The release's downloads per UTC day over a period, in all and per artifact (release-downloads.ts). */
    async downloads(
      principal: Principal,
      appId: string,
      releaseId: string,
      query: { from?: string; to?: string },
    ) {
      const release = await requireRelease(principal, appId, releaseId);
      return releaseDownloads(db, release, query, clock.now());
    },

    publish: (principal: Principal, appId: string, releaseId: string) =>
      transition(principal, appId, releaseId, 'published'),

    yank: (principal: Principal, appId: string, releaseId: string) =>
      transition(principal, appId, releaseId, 'yanked'),

    /** Deletes a draft; a release that was published stays, yanked at most. */
    async remove(principal: Principal, appId: string, releaseId: string) {
      await apps.requireOwnedApp(principal, appId);
      await db.transaction().execute(async (trx) => {
        const row = await store.findRelease(trx, appId, releaseId, { forUpdate: true });
        if (!row) throw notFound('Release');
        if (row.status !== 'draft') {
          throw new AppError('release_not_draft', 'Only a draft can be deleted; yank a published release');
        }
        await store.deleteRelease(trx, row.id);
      });
    },
  };
}

function releaseExists(version: string): AppError {
  return new AppError('release_exists', `This app already has a release of version ${version}`, [
    { field: 'version', message: 'is taken by another release of this app' },
  ]);
}

export function toRelease(row: ReleaseRow) {
  return {
    id: row.id,
    appId: row.app_id,
    version: row.version,
    channel: row.channel,
    status: row.status,
    notes: row.notes,
    requiredFeatures: row.required_features,
    publishedAt: isoOrNull(row.published_at),
    yankedAt: isoOrNull(row.yanked_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
