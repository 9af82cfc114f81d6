import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';

/**
 * A create form kept out of the way until asked for, so the list stays in view (on a phone, a
 * form above or below a list would push it off the screen). The button says whether the form
 * is open (aria-expanded); opening it moves focus to its first field, Escape or Cancel close it.
 */
export function useCreatePanel(label: string) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const toggle = useRef<HTMLButtonElement>(null);
  const close = () => {
    setOpen(false);
    toggle.current?.focus();
  };
  const button = (
    <button
      ref={toggle}
      type="button"
      class={open ? 'secondary' : 'primary'}
      aria-expanded={open}
      aria-controls={id}
      onClick={() => setOpen(!open)}
    >
      {label}
    </button>
  );
  return {
    open,
    show: () => setOpen(true),
    button,
    panel: (children: ComponentChildren) => (
      <Panel id={id} open={open} onClose={close}>
        {children}
      </Panel>
    ),
  };
}

function Panel({
  id,
  open,
  onClose,
  children,
}: {
  id: string;
  open: boolean;
  onClose(): void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const latestClose = useRef(onClose);
  latestClose.current = onClose;
  useEffect(() => {
    if (!open) return;
    ref.current?.querySelector<HTMLElement>('input, select, textarea')?.focus();
    // Escape from within the form closes it, unless a dialog of its own (a new secret) is open.
    const onKey = (event: KeyboardEvent) => {
      if (
        event.key === 'Escape' &&
        ref.current?.contains(document.activeElement) &&
        !document.querySelector('dialog[open]')
      )
        latestClose.current();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);
  return (
    <div id={id} ref={ref} class="create-panel" hidden={!open}>
      {open && (
        <>
          {children}
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
        </>
      )}
    </div>
  );
}

/** What stands instead of an empty list: what the list is for, and the action that fills it. */
export function EmptyState({
  title,
  children,
  action,
}: {
  title: string;
  children?: ComponentChildren;
  action?: ComponentChildren;
}) {
  return (
    <div class="empty-state">
      <p class="empty-title">{title}</p>
      {children && <p>{children}</p>}
      {action && <div class="actions">{action}</div>}
    </div>
  );
}
