import { useId, useRef, useState } from 'preact/hooks';
import { api, upload } from '../api';
import { CopyButton } from '../components/copy';
import { useConfirm } from '../components/dialog';
import { ActionButton, FormError, TextField } from '../components/form';
import { ListTable } from '../components/list';
import { Loading, Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatBytes, formatNumber } from '../format';
import type { Artifact, Release } from '../types';
import { HostedArtifact } from './hosted-artifact';

/** An artifact's address in the API: its name, and its platform and architecture when set. */
const addressOf = (base: string, artifact: Pick<Artifact, 'filename' | 'platform' | 'arch'>) =>
  `${base}/artifacts/${encodeURIComponent(artifact.filename)}${query(artifact)}`;
function query({ platform, arch }: { platform: string | null; arch: string | null }) {
  const params = new URLSearchParams({ ...(platform ? { platform } : {}), ...(arch ? { arch } : {}) });
  const text = params.toString();
  return text ? `?${text}` : '';
}
const keyOf = (artifact: Artifact) => artifact.id;
/** What a hosted file shows for a size or digest its seller did not give. */
const NOT_DECLARED = 'Not given';

/** A release's files: listed with their digests and downloads, uploaded with a progress bar. */
export function Artifacts({ release, base }: { release: Release; base: string }) {
  const artifacts = useLoad(
    () => api.get<{ artifacts: Artifact[]; total: number }>(`${base}/artifacts`),
    `${base}:${release.updatedAt}`,
  );
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const remove = async (artifact: Artifact) => {
    const yes = await confirm({
      title: `Remove ${artifact.filename}?`,
      message: 'The file is taken off this draft. Upload it again to put it back.',
      action: 'Remove file',
      danger: true,
    });
    if (yes && (await action.run(() => api.delete(addressOf(base, artifact))))) {
      announce(`${artifact.filename} removed`);
      artifacts.reload();
    }
  };
  return (
    <>
      <Section title="Files">
        <Loading state={artifacts}>
          {(list) => (
            <ListTable
              caption="Files"
              rows={list.artifacts}
              rowKey={keyOf}
              empty={<p>No file yet. Upload the installers and archives of this version below.</p>}
              columns={[
                {
                  title: 'File',
                  cell: (artifact) => (
                    <>
                      <span class="break">{artifact.filename}</span>
                      {artifact.url && (
                        <span class="hint break">
                          Hosted at{' '}
                          <a href={artifact.url} rel="noopener noreferrer">
                            {artifact.url}
                          </a>
                        </span>
                      )}
                    </>
                  ),
                },
                { title: 'Platform', cell: (artifact) => artifact.platform ?? 'Every platform' },
                { title: 'Architecture', cell: (artifact) => artifact.arch ?? 'Every architecture' },
                {
                  title: 'Size',
                  card: 'figure',
                  cell: (artifact) => (artifact.size === null ? NOT_DECLARED : formatBytes(artifact.size)),
                },
                {
                  title: 'SHA-256',
                  cell: ({ sha256, filename }) =>
                    sha256 === null ? (
                      NOT_DECLARED
                    ) : (
                      <span class="key-cell">
                        <code title={sha256}>{sha256.slice(0, 12)}…</code>
                        <CopyButton
                          text={sha256}
                          label="Copy"
                          what="SHA-256"
                          name={`Copy the SHA-256 of ${filename}`}
                        />
                      </span>
                    ),
                },
                { title: 'Downloads', cell: (artifact) => formatNumber(artifact.downloads) },
              ]}
              actions={
                release.status === 'draft'
                  ? (artifact) => (
                      <ActionButton action={action} kind="danger" onClick={() => remove(artifact)}>
                        Remove <span class="visually-hidden">{artifact.filename}</span>
                      </ActionButton>
                    )
                  : undefined
              }
            />
          )}
        </Loading>
        <FormError error={action.error} />
        {confirmDialog}
        {release.status === 'yanked' && <p class="muted">A yanked release takes no new file.</p>}
      </Section>
      {release.status !== 'yanked' && (
        <>
          <UploadArtifact release={release} base={base} onUploaded={artifacts.reload} />
          <HostedArtifact base={base} onAdded={artifacts.reload} />
        </>
      )}
    </>
  );
}

interface Progress {
  filename: string;
  percent: number;
  done: boolean;
}

/**
 * The file chosen, the name buyers will download it as (the file's own name to begin with),
 * its platform and architecture, and a progress bar while the bytes go up.
 */
function UploadArtifact({
  release,
  base,
  onUploaded,
}: {
  release: Release;
  base: string;
  onUploaded(): void;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [filename, setFilename] = useState('');
  const [platform, setPlatform] = useState('');
  const [arch, setArch] = useState('');
  const [progress, setProgress] = useState<Progress | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const action = useAction();
  const announce = useAnnounce();
  const fileId = useId();
  const progressId = useId();
  const choose = (chosen: File | undefined) => {
    action.clear();
    setFile(chosen ?? null);
    setFilename(chosen?.name ?? '');
  };
  const send = () =>
    action.run(async () => {
      if (!file) throw new Error('Choose a file to upload first.');
      const name = filename.trim();
      setProgress({ filename: name, percent: 0, done: false });
      try {
        const stored = await upload<Artifact>(
          `${base}/artifacts/${encodeURIComponent(name)}`,
          { platform: platform.trim(), arch: arch.trim() },
          file,
          (sent, total) =>
            setProgress({ filename: name, percent: Math.floor((sent / total) * 100), done: false }),
        );
        setProgress({ filename: stored.filename, percent: 100, done: true });
        announce(`${stored.filename} uploaded`);
      } catch (error) {
        setProgress(null);
        throw error;
      }
      setFile(null);
      setFilename('');
      if (input.current) input.current.value = '';
      onUploaded();
    });
  return (
    <Section title="Upload a file">
      <form
        class="form"
        aria-label="Upload a file"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        {release.status === 'published' && (
          <p class="hint">
            This release is published: it takes new files, but never other bytes under a name it already has.
          </p>
        )}
        <div class="field">
          <label for={fileId}>File</label>
          <input
            ref={input}
            id={fileId}
            type="file"
            disabled={action.busy}
            onChange={(event) => choose(event.currentTarget.files?.[0])}
          />
        </div>
        <TextField
          label="File name"
          name="filename"
          required
          value={filename}
          onValue={setFilename}
          error={action.error}
          hint="What buyers download it as: letters, digits, ., _, + and -, no spaces."
        />
        <div class="row">
          <TextField
            label="Platform"
            name="platform"
            value={platform}
            onValue={setPlatform}
            error={action.error}
            hint="linux, macos, windows… Empty: every platform."
          />
          <TextField
            label="Architecture"
            name="arch"
            value={arch}
            onValue={setArch}
            error={action.error}
            hint="x64, arm64, universal… Empty: every architecture."
          />
        </div>
        {progress && (
          <div class="upload-progress">
            <span id={progressId}>
              {progress.done ? `Uploaded ${progress.filename}` : `Uploading ${progress.filename}`}
            </span>
            <progress aria-labelledby={progressId} max={100} value={progress.percent} />
            <span class="upload-percent" aria-hidden="true">
              {progress.percent} %
            </span>
          </div>
        )}
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Upload file
        </button>
      </form>
    </Section>
  );
}
