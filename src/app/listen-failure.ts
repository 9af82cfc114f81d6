/** The settings that place one listener: its port's variable and its address's. */
export interface ListenerSettings {
  portVariable: string;
  hostVariable: string;
  host: string;
  port: number;
}

/**
 * A listener that could not open, told in the operator's terms: which setting placed it and how
 * to move it. A second copy started on one machine otherwise exits with a bare `EADDRINUSE`
 * naming a port and no setting. Anything else is passed on as it is.
 */
export function explainListenFailure(error: unknown, where: ListenerSettings): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const address = `${where.host}:${where.port}`;
  const message =
    code === 'EADDRINUSE'
      ? `${where.portVariable}: ${address} is already in use (another copy of this service, or another program). Stop it, or set ${where.portVariable} to a free port.`
      : code === 'EACCES'
        ? `${where.portVariable}: not allowed to listen on ${address} (ports below 1024 need privileges). Set ${where.portVariable} to a port above 1023.`
        : code === 'EADDRNOTAVAIL'
          ? `${where.hostVariable}: ${where.host} is not an address of this machine. Set ${where.hostVariable} to one of its addresses (127.0.0.1, 0.0.0.0).`
          : null;
  return message ? Object.assign(new Error(message), { code }) : error;
}
