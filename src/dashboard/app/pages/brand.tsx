import { useEffect, useRef, useState } from 'preact/hooks';
import { accentColours } from '../../../modules/brand/accent';
import { api } from '../api';
import { CopyButton } from '../components/copy';
import { ActionButton, Form, FormError, Submit, TextArea, TextField } from '../components/form';
import { Loading, Page, Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import type { Brand } from '../types';

/** The largest logo the service takes (it says so too; checked here to spare a long upload). */
const LOGO_MAX_BYTES = 256 * 1024;
const HEX = /^#[0-9A-Fa-f]{6}$/;
/** What the checkout shows when the seller has chosen no colour. */
const DEFAULT_ACCENT = '#3a4bdb';

interface Draft {
  displayName: string;
  accentColor: string;
  overlayOrigins: string;
}

const draftOf = (brand: Brand): Draft => ({
  displayName: brand.displayName ?? '',
  accentColor: brand.accentColor ?? '',
  overlayOrigins: brand.overlayOrigins.join('\n'),
});

/** The logo as the dashboard shows it: from this host, at the address of its current version. */
const logoPath = (brand: Brand) =>
  brand.logo && brand.id ? `/v1/brands/${brand.id}/logo${new URL(brand.logo.url).search}` : null;

export function BrandPage() {
  const brand = useLoad(() => api.get<Brand>('/brand'), 'brand');
  return (
    <Page title="Brand">
      <p class="muted">
        Your name, logo and colour on your checkout pages, in the buyer portal and in the e-mails buyers get
        with their license keys; and the sites that may open your checkout over their own pages.
      </p>
      <Loading state={brand}>{(loaded) => <BrandEditor brand={loaded} onSaved={brand.reload} />}</Loading>
    </Page>
  );
}

function BrandEditor({ brand, onSaved }: { brand: Brand; onSaved(): void }) {
  const [draft, setDraft] = useState(() => draftOf(brand));
  // A file chosen but not uploaded yet, shown in the preview from its own bytes.
  const [chosen, setChosen] = useState<{ file: File; preview: string } | null>(null);
  useEffect(() => setDraft(draftOf(brand)), [brand]);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  return (
    <div class="brand-editor">
      <div class="brand-settings">
        <BrandForm brand={brand} draft={draft} set={set} onSaved={onSaved} />
        <LogoForm brand={brand} chosen={chosen} onChosen={setChosen} onSaved={onSaved} />
        <OverlaySnippet brand={brand} />
      </div>
      <Preview
        name={draft.displayName.trim()}
        accent={HEX.test(draft.accentColor) ? draft.accentColor : null}
        logo={chosen?.preview ?? logoPath(brand)}
      />
    </div>
  );
}

function BrandForm({
  brand,
  draft,
  set,
  onSaved,
}: {
  brand: Brand;
  draft: Draft;
  set<K extends keyof Draft>(key: K, value: Draft[K]): void;
  onSaved(): void;
}) {
  const save = useAction();
  const announce = useAnnounce();
  const submit = () =>
    save.run(async () => {
      await api.put<Brand>('/brand', {
        displayName: draft.displayName.trim() === '' ? null : draft.displayName,
        accentColor: draft.accentColor.trim() === '' ? null : draft.accentColor.trim(),
        overlayOrigins: draft.overlayOrigins
          .split(/\s+/)
          .map((origin) => origin.trim())
          .filter(Boolean),
      });
      announce('Brand saved');
      onSaved();
    });
  return (
    <Section title="Name and colour">
      <Form label="Brand" onSubmit={submit}>
        <TextField
          label="Name buyers see"
          name="displayName"
          hint="Up to 80 characters; empty: no name is shown."
          maxLength={80}
          value={draft.displayName}
          onValue={(v) => set('displayName', v)}
          error={save.error}
        />
        <div class="colour-field">
          <TextField
            label="Accent colour"
            name="accentColor"
            hint="#rrggbb; empty: the checkout's own blue. Text on it is black or white, whichever reads better."
            maxLength={7}
            value={draft.accentColor}
            onValue={(v) => set('accentColor', v)}
            error={save.error}
          />
          <input
            type="color"
            class="colour-picker"
            aria-label="Pick the accent colour"
            value={
              HEX.test(draft.accentColor)
                ? draft.accentColor.toLowerCase()
                : (brand.accentColor ?? DEFAULT_ACCENT)
            }
            onInput={(event) => set('accentColor', event.currentTarget.value)}
          />
        </div>
        <TextArea
          label="Sites that may open the overlay checkout"
          name="overlayOrigins"
          hint="One origin per line: https, the host, and a port if the site has one; no path and no wildcard. Only these sites may show your checkout in a frame."
          rows={3}
          value={draft.overlayOrigins}
          onValue={(v) => set('overlayOrigins', v)}
          error={save.error}
        />
        <Submit action={save}>Save brand</Submit>
      </Form>
    </Section>
  );
}

function LogoForm({
  brand,
  chosen,
  onChosen,
  onSaved,
}: {
  brand: Brand;
  chosen: { file: File; preview: string } | null;
  onChosen(chosen: { file: File; preview: string } | null): void;
  onSaved(): void;
}) {
  const action = useAction();
  const announce = useAnnounce();
  const input = useRef<HTMLInputElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const choose = (file: File | undefined) => {
    setProblem(null);
    action.clear();
    if (!file) return onChosen(null);
    if (file.size > LOGO_MAX_BYTES) {
      onChosen(null);
      setProblem(`This file is ${Math.ceil(file.size / 1024)} KB; a logo can be at most 256 KB.`);
      return;
    }
    const reader = new FileReader();
    reader.onload = () => onChosen({ file, preview: String(reader.result) });
    reader.readAsDataURL(file);
  };
  const upload = () =>
    action.run(async () => {
      if (!chosen) return;
      await api.put<Brand>('/brand/logo', chosen.file);
      onChosen(null);
      if (input.current) input.current.value = '';
      announce('Logo uploaded');
      onSaved();
    });
  const remove = () =>
    action.run(async () => {
      await api.delete('/brand/logo');
      announce('Logo removed');
      onSaved();
    });
  return (
    <Section title="Logo">
      <p class="hint" id="logo-hint">
        A PNG, JPEG or WebP image of at most 256 KB. It is scaled to fit 480 × 160 pixels and shown 40 pixels
        high. SVG is not accepted.
      </p>
      {brand.logo && !chosen && (
        <p class="muted">
          Now: {brand.logo.width} × {brand.logo.height} pixels, {Math.ceil(brand.logo.bytes / 1024)} KB.
        </p>
      )}
      <div class="field">
        <label for="logo-file">Logo file</label>
        <input
          ref={input}
          id="logo-file"
          type="file"
          accept="image/png,image/jpeg,image/webp"
          aria-describedby="logo-hint"
          onChange={(event) => choose(event.currentTarget.files?.[0])}
        />
      </div>
      {problem && (
        <p class="form-error" role="alert">
          {problem}
        </p>
      )}
      <FormError error={action.error} />
      <div class="actions">
        <ActionButton action={action} kind="primary" onClick={upload}>
          Upload logo
        </ActionButton>
        {brand.logo && (
          <ActionButton action={action} kind="danger" onClick={remove}>
            Remove logo
          </ActionButton>
        )}
      </div>
    </Section>
  );
}

/** What the seller pastes into their site to sell in the overlay. */
function OverlaySnippet({ brand }: { brand: Brand }) {
  const snippet = `<script src="${brand.overlayScriptUrl}" defer></script>\n<button type="button" data-licensing-checkout="PRODUCT_ID">Buy</button>`;
  return (
    <Section title="Overlay checkout">
      <p class="muted">
        Paste this into a page of a site listed above, with a product’s id in place of PRODUCT_ID. The button
        opens your checkout over the page; the page receives a <code>licensing-checkout:success</code> event
        once the buyer has paid.
      </p>
      <pre>
        <code>{snippet}</code>
      </pre>
      <CopyButton text={snippet} label="Copy the snippet" what="Snippet" />
    </Section>
  );
}

/** The top of a checkout page as buyers will see it, drawn from the form as it is now. */
function Preview({ name, accent, logo }: { name: string; accent: string | null; logo: string | null }) {
  const colours = accentColours(accent ?? DEFAULT_ACCENT);
  return (
    <Section title="Preview">
      <div
        class="brand-preview"
        role="img"
        aria-label={`Checkout page${name ? ` of ${name}` : ''}: ${logo ? 'your logo, ' : ''}a Pay button in ${colours.accent} with ${colours.onAccent === '#ffffff' ? 'white' : 'black'} text`}
        style={{ '--brand': colours.accent, '--on-brand': colours.onAccent, '--brand-ink': colours.ink }}
      >
        {(name || logo) && (
          <p class="preview-seller">
            {logo && <img class="preview-logo" src={logo} alt="" />}
            {name && <span>{name}</span>}
          </p>
        )}
        <p class="preview-product">Your product</p>
        <p class="preview-price">$19.99</p>
        <span class="preview-pay">Pay $19.99</span>
        <span class="preview-link">Terms</span>
      </div>
    </Section>
  );
}
