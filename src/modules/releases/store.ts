import { type ExpressionBuilder, type Insertable, sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type {
  ReleaseArtifactRow,
  ReleaseArtifactsTable,
  ReleaseChannel,
  ReleaseRow,
  ReleaseStatus,
  Schema,
} from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';

export interface NewRelease {
  id: string;
  userId: string;
  appId: string;
  version: string;
  versionOrder: string;
  channel: ReleaseChannel;
  notes: string;
  requiredFeatures: string[];
  now: Date;
}

/** The new release, or undefined when the app has a release of that version already. */
export function insertRelease(executor: Executor, release: NewRelease): Promise<ReleaseRow | undefined> {
  return executor
    .insertInto('releases')
    .values({
      id: release.id,
      user_id: release.userId,
      app_id: release.appId,
      version: release.version,
      version_order: release.versionOrder,
      channel: release.channel,
      notes: release.notes,
      required_features: release.requiredFeatures,
      created_at: release.now,
      updated_at: release.now,
    })
    .onConflict((oc) => oc.columns(['app_id', 'version_order']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function findRelease(
  executor: Executor,
  appId: string,
  releaseId: string,
  options: { forUpdate?: boolean } = {},
): Promise<ReleaseRow | undefined> {
  let query = executor
    .selectFrom('releases')
    .selectAll()
    .where('app_id', '=', appId)
    .where('id', '=', releaseId);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export interface ReleaseFilter {
  channel?: ReleaseChannel;
  status?: ReleaseStatus;
}

/** An app's releases, newest version first. */
export async function listReleases(executor: Executor, appId: string, filter: ReleaseFilter, page: Page) {
  let query = executor.selectFrom('releases').where('app_id', '=', appId);
  if (filter.channel) query = query.where('channel', '=', filter.channel);
  if (filter.status) query = query.where('status', '=', filter.status);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('version_order', 'desc').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export interface ReleaseChanges {
  version?: string;
  versionOrder?: string;
  channel?: ReleaseChannel;
  notes?: string;
  requiredFeatures?: string[];
  status?: ReleaseStatus;
  publishedAt?: Date;
  yankedAt?: Date;
  now: Date;
}

/** The release changed, or undefined when the new version is taken by another of the app's releases. */
export async function updateRelease(
  executor: Executor,
  releaseId: string,
  changes: ReleaseChanges,
): Promise<ReleaseRow | undefined> {
  try {
    return await executor
      .updateTable('releases')
      .set({
        ...(changes.version !== undefined ? { version: changes.version } : {}),
        ...(changes.versionOrder !== undefined ? { version_order: changes.versionOrder } : {}),
        ...(changes.channel !== undefined ? { channel: changes.channel } : {}),
        ...(changes.notes !== undefined ? { notes: changes.notes } : {}),
        ...(changes.requiredFeatures !== undefined ? { required_features: changes.requiredFeatures } : {}),
        ...(changes.status !== undefined ? { status: changes.status } : {}),
        ...(changes.publishedAt !== undefined ? { published_at: changes.publishedAt } : {}),
        ...(changes.yankedAt !== undefined ? { yanked_at: changes.yankedAt } : {}),
        updated_at: changes.now,
      })
      .where('id', '=', releaseId)
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if ((error as { code?: unknown }).code === '23505') return undefined;
    throw error;
  }
}

export async function deleteRelease(executor: Executor, releaseId: string): Promise<void> {
  await executor.deleteFrom('releases').where('id', '=', releaseId).execute();
}

export function findArtifact(
  executor: Executor,
  releaseId: string,
  address: { filename: string; platform: string; arch: string },
): Promise<ReleaseArtifactRow | undefined> {
  return executor
    .selectFrom('release_artifacts')
    .selectAll()
    .where('release_id', '=', releaseId)
    .where('filename', '=', address.filename)
    .where('platform', '=', address.platform)
    .where('arch', '=', address.arch)
    .executeTakeFirst();
}

export function listArtifacts(executor: Executor, releaseId: string): Promise<ReleaseArtifactRow[]> {
  return executor
    .selectFrom('release_artifacts')
    .selectAll()
    .where('release_id', '=', releaseId)
    .orderBy('filename')
    .orderBy('platform')
    .orderBy('arch')
    .execute();
}

export function insertArtifact(
  executor: Executor,
  row: Insertable<ReleaseArtifactsTable>,
): Promise<ReleaseArtifactRow> {
  return executor.insertInto('release_artifacts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function deleteArtifact(executor: Executor, artifactId: string): Promise<void> {
  await executor.deleteFrom('release_artifacts').where('id', '=', artifactId).execute();
}

/**
 * Which of these digests some stored artifact's row names (release_artifacts_by_blob answers it).
 * An external file's declared digest names no stored bytes, so it keeps none from the purge.
 */
export async function referencedBlobs(executor: Executor, digests: readonly string[]): Promise<Set<string>> {
  if (digests.length === 0) return new Set();
  const rows = await executor
    .selectFrom('release_artifacts')
    .select('sha256')
    .distinct()
    .where('url', 'is', null)
    .where('sha256', 'in', digests)
    .execute();
  return new Set(rows.flatMap((row) => (row.sha256 === null ? [] : [row.sha256])));
}

/** What the update check asks for: the newest release a license may have, past its version. */
export interface UpgradeSearch {
  appId: string;
  /** Only versions ordered after this one. */
  after: string;
  channels: readonly ReleaseChannel[];
  /** The license's entitlements: a release requiring any other is passed over. */
  features: readonly string[];
  /** A license keeping access past its expiry: only releases published by then. */
  publishedBy: Date | null;
  platform: string | null;
  arch: string | null;
}

/**
 * The newest published release matching `search`, with an artifact for the platform and
 * architecture when they are given (an artifact naming none suits every one); undefined when none.
 */
export function newestRelease(executor: Executor, search: UpgradeSearch): Promise<ReleaseRow | undefined> {
  let query = executor
    .selectFrom('releases as r')
    .selectAll('r')
    .where('r.app_id', '=', search.appId)
    .where('r.status', '=', 'published')
    .where('r.version_order', '>', search.after)
    .where('r.channel', 'in', search.channels)
    // Every feature the release requires is one the license grants.
    .where(sql<boolean>`r.required_features <@ ${sql.val(search.features)}::text[]`);
  if (search.publishedBy) query = query.where('r.published_at', '<=', search.publishedBy);
  if (search.platform !== null || search.arch !== null) {
    const { platform, arch } = search;
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('release_artifacts as a')
          .select('a.id')
          .whereRef('a.release_id', '=', 'r.id')
          .where((eb) => (platform === null ? eb.val(true) : eb('a.platform', 'in', [platform, ''])))
          .where((eb) => (arch === null ? eb.val(true) : eb('a.arch', 'in', [arch, '']))),
      ),
    );
  }
  return query.orderBy('r.version_order', 'desc').limit(1).executeTakeFirst();
}

/** An artifact and the release it belongs to, by the artifact's id. */
export function artifactWithRelease(executor: Executor, artifactId: string) {
  return executor
    .selectFrom('release_artifacts as a')
    .innerJoin('releases as r', 'r.id', 'a.release_id')
    .selectAll('a')
    .select(['r.status as release_status'])
    .where('a.id', '=', artifactId)
    .executeTakeFirst();
}

/**
 * One download of the artifact on `day` (UTC, `YYYY-MM-DD`): its running total and that day's
 * count, in one statement, so they are added to together or not at all.
 */
export async function countDownload(executor: Executor, artifactId: string, day: string): Promise<void> {
  await sql`
    with counted as (
      update release_artifacts set downloads = downloads + 1 where id = ${artifactId} returning id
    )
    insert into release_artifact_downloads as d (artifact_id, day, downloads)
    select id, ${day}::date, 1 from counted
    on conflict (artifact_id, day) do update set downloads = d.downloads + 1
  `.execute(executor);
}

/** A release's downloads per artifact and UTC day from `first` to `last` (`YYYY-MM-DD`), days with any only. */
export function downloadDays(executor: Executor, releaseId: string, first: string, last: string) {
  return executor
    .selectFrom('release_artifact_downloads as d')
    .innerJoin('release_artifacts as a', 'a.id', 'd.artifact_id')
    .select(['d.artifact_id', sql<string>`d.day::text`.as('day'), 'd.downloads'])
    .where('a.release_id', '=', releaseId)
    .where('d.day', '>=', sql<string>`${first}::date`)
    .where('d.day', '<=', sql<string>`${last}::date`)
    .execute();
}

/** The app's published release of this version (its precedence order), if there is one. */
export function publishedRelease(
  executor: Executor,
  appId: string,
  versionOrder: string,
): Promise<ReleaseRow | undefined> {
  return executor
    .selectFrom('releases')
    .selectAll()
    .where('app_id', '=', appId)
    .where('version_order', '=', versionOrder)
    .where('status', '=', 'published')
    .executeTakeFirst();
}

/** What a license holder may have, without a client's version: the grant's filters only. */
export interface HolderSearch {
  appId: string;
  features: readonly string[];
  publishedBy: Date | null;
}

/**
 * Of each channel, the newest published release a license with these entitlements may have
 * (one row a channel at most, newest version first).
 */
export function newestPerChannel(executor: Executor, search: HolderSearch): Promise<ReleaseRow[]> {
  let query = executor
    .selectFrom('releases as r')
    .selectAll('r')
    .distinctOn('r.channel')
    .where('r.app_id', '=', search.appId)
    .where('r.status', '=', 'published')
    .where(sql<boolean>`r.required_features <@ ${sql.val(search.features)}::text[]`);
  if (search.publishedBy) query = query.where('r.published_at', '<=', search.publishedBy);
  return query.orderBy('r.channel').orderBy('r.version_order', 'desc').execute();
}

/** The app's newest published release of any channel, whoever may have it. */
export function newestPublished(executor: Executor, appId: string): Promise<ReleaseRow | undefined> {
  return executor
    .selectFrom('releases')
    .selectAll()
    .where('app_id', '=', appId)
    .where('status', '=', 'published')
    .orderBy('version_order', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The artifacts of these releases, by release, then as listArtifacts orders them. */
export function artifactsOfReleases(
  executor: Executor,
  releaseIds: readonly string[],
): Promise<ReleaseArtifactRow[]> {
  if (releaseIds.length === 0) return Promise.resolve([]);
  return executor
    .selectFrom('release_artifacts')
    .selectAll()
    .where('release_id', 'in', [...releaseIds])
    .orderBy('release_id')
    .orderBy('filename')
    .orderBy('platform')
    .orderBy('arch')
    .execute();
}

/** What an updater feed asks for: the newest release with a file the updater can install. */
export interface FeedSearch extends Omit<UpgradeSearch, 'platform' | 'arch'> {
  /** The names the platform goes by; a file naming none suits every platform. */
  platforms: readonly string[];
  /** The names the architecture goes by (a file naming none suits every one); null: any. */
  arches: readonly string[] | null;
  /** Lower-case endings of the file names the updater installs (`.exe`, `.app.tar.gz`). */
  suffixes: readonly string[];
  /**
   * Only a file with its `<name>.sig` beside it in the release, stored by the service (it reads the
   * signature) and of at most this many bytes; null: any file.
   */
  signedWithin: number | null;
  /** Only a file whose size and SHA-512 are known (an external file's seller may have declared neither). */
  withSizeAndSha512: boolean;
}

/** Whether artifact `a` is a file `search` asks for (SQL). */
function isFeedFile(search: FeedSearch) {
  return (eb: ExpressionBuilder<Schema & { a: ReleaseArtifactsTable }, 'a'>) =>
    eb.and([
      eb('a.platform', 'in', [...search.platforms, '']),
      search.arches === null ? eb.val(true) : eb('a.arch', 'in', [...search.arches, '']),
      eb.or(search.suffixes.map((suffix) => eb(sql<string>`lower(a.filename)`, 'like', `%${suffix}`))),
      search.signedWithin === null
        ? eb.val(true)
        : eb.exists(
            eb
              .selectFrom('release_artifacts as s')
              .select('s.id')
              .whereRef('s.release_id', '=', 'a.release_id')
              .where('s.filename', '=', sql<string>`a.filename || '.sig'`)
              .where('s.url', 'is', null)
              .where('s.size', '<=', search.signedWithin),
          ),
      search.withSizeAndSha512
        ? eb.and([eb('a.size', 'is not', null), eb('a.sha512', 'is not', null)])
        : eb.val(true),
    ]);
}

/** The newest published release matching `search` that has a file it asks for; undefined when none. */
export function newestFeedRelease(executor: Executor, search: FeedSearch): Promise<ReleaseRow | undefined> {
  let query = executor
    .selectFrom('releases as r')
    .selectAll('r')
    .where('r.app_id', '=', search.appId)
    .where('r.status', '=', 'published')
    .where('r.version_order', '>', search.after)
    .where('r.channel', 'in', search.channels)
    .where(sql<boolean>`r.required_features <@ ${sql.val(search.features)}::text[]`)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('release_artifacts as a')
          .select('a.id')
          .whereRef('a.release_id', '=', 'r.id')
          .where(isFeedFile(search)),
      ),
    );
  if (search.publishedBy) query = query.where('r.published_at', '<=', search.publishedBy);
  return query.orderBy('r.version_order', 'desc').limit(1).executeTakeFirst();
}

/** The files of a release `search` asks for, and every artifact of the release (for the `.sig` files). */
export async function feedFiles(executor: Executor, releaseId: string, search: FeedSearch) {
  const [files, all] = await Promise.all([
    executor
      .selectFrom('release_artifacts as a')
      .selectAll('a')
      .where('a.release_id', '=', releaseId)
      .where(isFeedFile(search))
      .orderBy('a.filename')
      .execute(),
    listArtifacts(executor, releaseId),
  ]);
  return { files, all };
}
