import { useState } from 'preact/hooks';
import { useAnnounce } from './status';

/** Copies text to the clipboard and says so; when the browser refuses, says how to copy by hand. */
export function CopyButton({ text, label, what }: { text: string; label: string; what: string }) {
  const announce = useAnnounce();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      announce(`${what} copied to the clipboard`);
    } catch {
      announce(`The browser did not allow copying; select the ${what.toLowerCase()} and copy it yourself`);
    }
  };
  return (
    <button type="button" class="secondary" onClick={copy}>
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A secret shown masked until asked for, with a button to copy it either way. */
export function SecretValue({ value, what }: { value: string; what: string }) {
  const [shown, setShown] = useState(false);
  return (
    <span class="secret">
      {shown ? (
        <code>{value}</code>
      ) : (
        <code>
          <span aria-hidden="true">{'•'.repeat(24)}</span>
          <span class="visually-hidden">{what} hidden</span>
        </code>
      )}
      <button type="button" class="secondary" aria-pressed={shown} onClick={() => setShown(!shown)}>
        {shown ? `Hide ${what.toLowerCase()}` : `Reveal ${what.toLowerCase()}`}
      </button>
      <CopyButton text={value} label={`Copy ${what.toLowerCase()}`} what={what} />
    </span>
  );
}
