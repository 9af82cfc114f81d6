import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Session, User } from './types';

export interface SessionState {
  user: User;
  signOut(): void;
}

export const SessionContext = createContext<SessionState | null>(null);

/** The signed-in user; screens behind sign-in only render with one. */
export function useSession(): SessionState {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in screen');
  return session;
}

export type SignedIn = (session: Session) => void;
