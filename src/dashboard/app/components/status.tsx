import { type ComponentChildren, createContext } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';

type Announce = (message: string) => void;

const StatusContext = createContext<Announce>(() => {});

/** What just happened, said once in a polite live region and shown at the top of the screen. */
export function StatusProvider({ children }: { children: ComponentChildren }) {
  const [message, setMessage] = useState('');
  const announce = useCallback((text: string) => {
    // Cleared first so the same message twice is announced twice.
    setMessage('');
    setTimeout(() => setMessage(text), 50);
  }, []);
  return (
    <StatusContext.Provider value={announce}>
      {children}
      <div class={message ? 'status-bar' : 'status-bar empty'} role="status" aria-live="polite">
        {message}
      </div>
    </StatusContext.Provider>
  );
}

export function useAnnounce(): Announce {
  return useContext(StatusContext);
}
