import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { CopyButton } from './copy';

/**
 * A modal <dialog>: the browser moves focus into it, keeps it there, and closes it on Escape.
 * Focus goes back to what had it before, so a keyboard user does not lose their place.
 */
function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose(): void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog || !open) return;
    const before = document.activeElement as HTMLElement | null;
    dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      before?.focus();
    };
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose}>
      {open && (
        <div class="dialog-body">
          <h2 id={titleId}>{title}</h2>
          {children}
        </div>
      )}
    </dialog>
  );
}

interface Question {
  title: string;
  message: string;
  action: string;
  danger?: boolean;
}

/** Asks before something that cannot be undone; resolves true when the user confirms. */
export function useConfirm(): [(question: Question) => Promise<boolean>, ComponentChildren] {
  const [pending, setPending] = useState<(Question & { answer(yes: boolean): void }) | null>(null);
  const ask = (question: Question) =>
    new Promise<boolean>((resolve) => setPending({ ...question, answer: resolve }));
  const finish = (yes: boolean) => {
    pending?.answer(yes);
    setPending(null);
  };
  const element = (
    <Dialog open={pending !== null} title={pending?.title ?? ''} onClose={() => finish(false)}>
      <p>{pending?.message}</p>
      <div class="actions">
        <button type="button" class={pending?.danger ? 'danger' : 'primary'} onClick={() => finish(true)}>
          {pending?.action}
        </button>
        <button type="button" class="secondary" autofocus onClick={() => finish(false)}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
  return [ask, element];
}

/**
 * A secret the API shows only once (a new key, a signing secret): in a dialog, in a field to
 * select, with a button to copy it, until the user is done with it.
 */
export function SecretOnce({
  secret,
  title,
  warning,
  note,
  label,
  what,
  copyLabel,
  onDone,
}: {
  /** Null while there is none to show. */
  secret: string | null;
  title: string;
  /** To copy it now, said first and in bold. */
  warning: string;
  note?: string;
  /** The field's label. */
  label: string;
  /** What it is, as the copy button says it. */
  what: string;
  copyLabel: string;
  onDone(): void;
}) {
  const id = useId();
  return (
    <Dialog open={secret !== null} title={title} onClose={onDone}>
      {secret !== null && (
        <>
          <p>
            <strong>{warning}</strong>
            {note && ` ${note}`}
          </p>
          <div class="field">
            <label for={id}>{label}</label>
            <input id={id} readOnly value={secret} class="mono" />
          </div>
          <div class="actions">
            <CopyButton text={secret} label={copyLabel} what={what} />
            <button type="button" class="primary" onClick={onDone}>
              Done
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}
