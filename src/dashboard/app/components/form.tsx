import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { ApiError } from '../api';

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

interface FieldShell {
  label: string;
  /** Where the API names the field in its error details. */
  name: string;
  error?: ApiError | null;
  hint?: string;
}

function useDescribed({ name, error, hint }: FieldShell) {
  const id = useId();
  const problem = fieldProblem(error ?? null, name);
  const hintId = hint ? `${id}-hint` : undefined;
  const problemId = problem ? `${id}-problem` : undefined;
  const describedBy = [hintId, problemId].filter(Boolean).join(' ') || undefined;
  const notes = (
    <>
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
    </>
  );
  return { id, problem, describedBy, notes };
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
  const { id, problem, describedBy, notes } = useDescribed({ label, name, error, hint });
  return (
    <div class={problem ? 'field invalid' : 'field'}>
      <label for={id}>{label}</label>
      <input
        {...input}
        // Preact types each input type separately; every type listed in InputProps takes these props.
        type={type as 'text'}
        id={id}
        name={name}
        value={value}
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={describedBy}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      {notes}
    </div>
  );
}

type AreaProps = FieldShell & {
  value: string;
  onValue(value: string): void;
  rows?: number;
  required?: boolean;
};

export function TextArea({ label, name, error, hint, value, onValue, rows = 3, required }: AreaProps) {
  const { id, problem, describedBy, notes } = useDescribed({ label, name, error, hint });
  return (
    <div class={problem ? 'field invalid' : 'field'}>
      <label for={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        rows={rows}
        required={required}
        value={value}
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={describedBy}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
      {notes}
    </div>
  );
}

export interface Option {
  value: string;
  label: string;
}

type SelectProps = FieldShell & {
  value: string;
  options: readonly Option[];
  onValue(value: string): void;
  required?: boolean;
};

export function SelectField({ label, name, error, hint, value, options, onValue, required }: SelectProps) {
  const { id, problem, describedBy, notes } = useDescribed({ label, name, error, hint });
  return (
    <div class={problem ? 'field invalid' : 'field'}>
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        required={required}
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={describedBy}
        onChange={(event) => onValue(event.currentTarget.value)}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {notes}
    </div>
  );
}

type CheckboxProps = FieldShell & { checked: boolean; onChecked(checked: boolean): void; disabled?: boolean };

export function Checkbox({ label, name, error, hint, checked, onChecked, disabled }: CheckboxProps) {
  const { id, problem, describedBy, notes } = useDescribed({ label, name, error, hint });
  return (
    <div class={problem ? 'field checkbox invalid' : 'field checkbox'}>
      <input
        type="checkbox"
        id={id}
        name={name}
        checked={checked}
        disabled={disabled}
        aria-invalid={problem ? 'true' : undefined}
        aria-describedby={describedBy}
        onChange={(event) => onChecked(event.currentTarget.checked)}
      />
      <label for={id}>{label}</label>
      {notes}
    </div>
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
