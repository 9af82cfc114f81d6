import type { ApiError } from '../api';
import { EVENT_TYPES } from '../types';
import { Checkbox, fieldProblem, TextField } from './form';

/** Where a webhook posts and what it hears about, as a new webhook's and a changed one's form has them. */
export interface Endpoint {
  url: string;
  events: string[];
}

export function EndpointFields({
  value,
  onValue,
  error,
}: {
  value: Endpoint;
  onValue(value: Endpoint): void;
  error: ApiError | null;
}) {
  return (
    <>
      <TextField
        label="Endpoint URL"
        name="url"
        type="url"
        required
        value={value.url}
        onValue={(url) => onValue({ ...value, url })}
        error={error}
      />
      <EventsField events={value.events} onEvents={(events) => onValue({ ...value, events })} error={error} />
    </>
  );
}

/** The event kinds a webhook subscribes to, as a group of checkboxes. */
function EventsField({
  events,
  onEvents,
  error,
}: {
  events: string[];
  onEvents(events: string[]): void;
  error: ApiError | null;
}) {
  const problem = fieldProblem(error, 'events');
  return (
    <fieldset class={problem ? 'invalid' : undefined}>
      <legend>Events</legend>
      {EVENT_TYPES.map((type) => (
        <Checkbox
          key={type}
          label={type}
          name={`event-${type}`}
          checked={events.includes(type)}
          onChecked={(on) => onEvents(on ? [...events, type] : events.filter((e) => e !== type))}
        />
      ))}
      {problem && <span class="field-problem">{problem}</span>}
    </fieldset>
  );
}
