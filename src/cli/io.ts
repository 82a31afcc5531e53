// The streams and environment a command talks to. stdout is for data (JSON), stderr for
// people (progress, tables, messages). Injectable, so tests capture output without mocks.

export interface CliIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Colour and live progress only on an interactive terminal, never with NO_COLOR or CI. */
  color: boolean;
  interactive: boolean;
}

export function processIO(): CliIO {
  const env = process.env;
  const tty = Boolean(process.stderr.isTTY);
  const quiet = env.NO_COLOR !== undefined || Boolean(env.CI) || env.TERM === 'dumb';
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env,
    cwd: process.cwd(),
    color: tty && !quiet,
    interactive: tty && !env.CI,
  };
}

/** Minimal ANSI styling that turns itself off when colour is off. */
export function styler(io: Pick<CliIO, 'color'>) {
  const wrap = (open: number, close: number) => (s: string) => (io.color ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}
