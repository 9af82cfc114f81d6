import type { ApiError } from '../api';
import { EVENT_TYPES } from '../types';
import { Checkbox, fieldProblem } from './form';

/** The event kinds a webhook subscribes to, as a group of checkboxes. */
export function EventsField({
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
