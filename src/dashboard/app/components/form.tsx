import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { ApiError } from '../api';
import type { Action } from './use-api';

/** The API's message for one field (or a part of it: "metadata.plan" belongs to "metadata"). */
export function fieldProblem(error: ApiError | null, field: string): string | undefined {
  const found = error?.details.find((d) => d.field === field || d.field.startsWith(`${field}.`));
  return found?.message;
}

/** The error of the whole form: the API's message, said at once by screen readers. */
export function FormError({ error }: { error: ApiError | null }) {
  if (!error) return null;
  return (
    <div class="form-error" role="alert">
      <p>{error.message}</p>
      {error.details.length > 0 && (
        <ul>
          {error.details.map((d) => (
            <li key={`${d.field}:${d.message}`}>
              <strong>{d.field}</strong> {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A form's end: its error, then its submit button, which waits while the action runs. */
export function Submit({ action, children }: { action: Action; children: ComponentChildren }) {
  return (
    <>
      <FormError error={action.error} />
      <button type="submit" class="primary" disabled={action.busy}>
        {children}
      </button>
    </>
  );
}

/** A button that starts `action` (or a part of it), and waits while any of it runs. */
export function ActionButton({
  action,
  kind = 'secondary',
  onClick,
  children,
}: {
  action: Action;
  kind?: 'primary' | 'secondary' | 'danger';
  onClick(): void;
  children: ComponentChildren;
}) {
  return (
    <button type="button" class={kind} disabled={action.busy} onClick={() => onClick()}>
      {children}
    </button>
  );
}

interface FieldShell {
  label: string;
  /** Where the API names the field in its error details. */
  name: string;
  error?: ApiError | null;
  hint?: string;
}

/** What every control gets from its field: its label's id, and its hint and problem tied to it. */
interface ControlProps {
  id: string;
  name: string;
  'aria-invalid': 'true' | undefined;
  'aria-describedby': string | undefined;
}

/**
 * One field: its label, its control (drawn by `control` with the props above) and, beneath,
 * its hint and the API's problem with it. A checkbox comes before its label.
 */
function Field({
  label,
  name,
  error,
  hint,
  checkbox = false,
  control,
}: FieldShell & { checkbox?: boolean; control(props: ControlProps): ComponentChildren }) {
  const id = useId();
  const problem = fieldProblem(error ?? null, name);
  const hintId = hint ? `${id}-hint` : undefined;
  const problemId = problem ? `${id}-problem` : undefined;
  const props: ControlProps = {
    id,
    name,
    'aria-invalid': problem ? 'true' : undefined,
    'aria-describedby': [hintId, problemId].filter(Boolean).join(' ') || undefined,
  };
  const labelElement = <label for={id}>{label}</label>;
  return (
    <div class={['field', checkbox && 'checkbox', problem && 'invalid'].filter(Boolean).join(' ')}>
      {checkbox ? (
        <>
          {control(props)}
          {labelElement}
        </>
      ) : (
        <>
          {labelElement}
          {control(props)}
        </>
      )}
      {hint && (
        <span class="hint" id={hintId}>
          {hint}
        </span>
      )}
      {problem && (
        <span class="field-problem" id={problemId}>
          {problem}
        </span>
      )}
    </div>
  );
}

type InputProps = FieldShell & {
  value: string;
  onValue(value: string): void;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'date';
  required?: boolean;
  autoComplete?: string;
  inputMode?: 'decimal' | 'numeric' | 'text';
  maxLength?: number;
  min?: number;
};

export function TextField({ label, name, error, hint, value, onValue, type = 'text', ...input }: InputProps) {
  return (
    <Field
      label={label}
      name={name}
      error={error}
      hint={hint}
      control={(props) => (
        <input
          {...input}
          // Preact types each input type separately; every type listed in InputProps takes these props.
          type={type as 'text'}
          {...props}
          value={value}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      )}
    />
  );
}

type AreaProps = FieldShell & {
  value: string;
  onValue(value: string): void;
  rows?: number;
  required?: boolean;
};

export function TextArea({ value, onValue, rows = 3, required, ...shell }: AreaProps) {
  return (
    <Field
      {...shell}
      control={(props) => (
        <textarea
          {...props}
          rows={rows}
          required={required}
          value={value}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      )}
    />
  );
}

export interface Option {
  value: string;
  label: string;
}

/** Options whose values read as themselves, or through `label`. */
export function optionsOf(values: readonly string[], label = (value: string) => value): Option[] {
  return values.map((value) => ({ value, label: label(value) }));
}

/** Options to choose one of the seller's things by name. */
export function namedOptions(items: readonly { id: string; name: string }[]): Option[] {
  return items.map((item) => ({ value: item.id, label: item.name }));
}

type SelectProps = FieldShell & {
  value: string;
  options: readonly Option[];
  onValue(value: string): void;
  required?: boolean;
};

export function SelectField({ value, options, onValue, required, ...shell }: SelectProps) {
  return (
    <Field
      {...shell}
      control={(props) => (
        <select
          {...props}
          value={value}
          required={required}
          onChange={(event) => onValue(event.currentTarget.value)}
        >
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    />
  );
}

/** A filter by status: any, or one of `statuses`. */
export function StatusSelect({
  statuses,
  value,
  onValue,
}: {
  statuses: readonly string[];
  value: string;
  onValue(value: string): void;
}) {
  return (
    <SelectField
      label="Status"
      name="status"
      value={value}
      options={[{ value: '', label: 'Any status' }, ...optionsOf(statuses)]}
      onValue={onValue}
    />
  );
}

type CheckboxProps = FieldShell & { checked: boolean; onChecked(checked: boolean): void; disabled?: boolean };

export function Checkbox({ checked, onChecked, disabled, ...shell }: CheckboxProps) {
  return (
    <Field
      {...shell}
      checkbox
      control={(props) => (
        <input
          type="checkbox"
          {...props}
          checked={checked}
          disabled={disabled}
          onChange={(event) => onChecked(event.currentTarget.checked)}
        />
      )}
    />
  );
}

/** A form that submits on Enter and never reloads the page. */
export function Form({
  label,
  onSubmit,
  children,
  class: className,
}: {
  label: string;
  onSubmit(): void;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <form
      class={className ?? 'form'}
      aria-label={label}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}

/**
 * A list's search: its fields, then Search and Clear search. The caller keeps the fields' draft,
 * so `onClear` empties both the draft and the list's filter.
 */
export function SearchForm({
  label,
  onSearch,
  onClear,
  children,
}: {
  label: string;
  onSearch(): void;
  onClear(): void;
  children: ComponentChildren;
}) {
  return (
    <search>
      <Form label={label} class="form filters" onSubmit={onSearch}>
        {children}
        <div class="actions">
          <button type="submit" class="primary">
            Search
          </button>
          <button type="button" class="secondary" onClick={() => onClear()}>
            Clear search
          </button>
        </div>
      </Form>
    </search>
  );
}
