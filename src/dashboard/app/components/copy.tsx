import { useState } from 'preact/hooks';
import { useAnnounce } from './status';

/**
 * Copies text to the clipboard and says so; when the browser refuses, says how to copy by hand.
 * `name`, when the short `label` needs its row to make sense ("Copy"), is what it is called.
 */
export function CopyButton({
  text,
  label,
  what,
  name,
}: {
  text: string;
  label: string;
  what: string;
  name?: string;
}) {
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
    <button type="button" class="secondary" aria-label={name} onClick={copy}>
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

/**
 * A key on one line, never wrapped: whole where it fits, otherwise its start and its last five
 * characters around an ellipsis (styles.css). Its text is the whole key, as a selection copies
 * it; a link around it is best named by the key (aria-label), since its two parts sit side by
 * side as boxes that assistive technology may read apart.
 */
export function ShortKey({ value }: { value: string }) {
  const cut = Math.max(0, value.length - 5);
  return (
    <span class="short-key" title={value}>
      <span class="short-key-start">{value.slice(0, cut)}</span>
      <span class="short-key-end">{value.slice(cut)}</span>
    </span>
  );
}
