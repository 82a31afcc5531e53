// How this process is ending, for the CLI to name it (`bye`'s `cause`): the frames that called
// process.exit() (on the stack of the 'exit' event when JS code called it; none when the loop ran
// out or Node ended the process itself), and the last error no handler took. That error comes
// from `uncaughtExceptionMonitor`, a published hook that runs before Node's own handling and
// changes nothing of it (an app's 'uncaughtException' handler still decides); its stack is kept
// as text, a few lines, since V8 has already formatted it (through a source-map support if the app
// installed one). Never throws into the app: each step is guarded by the caller.
import type { ExitCause } from './protocol.js';
import { captureStack } from './hooks/call-site.js';
import { listen } from './originals.js';
import { safely } from './safe.js';

/** Lines of the uncaught error's stack kept (its message and the first frames). */
export const UNCAUGHT_STACK_LINES = 12;
/** Characters kept per line (a message can be a whole payload). */
const LINE_CHARS = 300;

export class ExitCauseWatch {
  private uncaught: ExitCause['uncaught'];

  watch(): void {
    listen(process, 'uncaughtExceptionMonitor', (err: unknown, origin: unknown) => safely('exit-cause', () => this.note(err, origin)));
  }

  private note(err: unknown, origin: unknown): void {
    const stack = err instanceof Error && typeof err.stack === 'string' ? err.stack : String(err);
    this.uncaught = {
      origin: origin === 'unhandledRejection' ? 'unhandledRejection' : 'uncaughtException',
      stack: stack
        .split('\n')
        .filter((l) => l.trim() !== '')
        .slice(0, UNCAUGHT_STACK_LINES)
        .map((l) => l.slice(0, LINE_CHARS)),
    };
  }

  /** Called from the 'exit' listener `skip` (its frames and those below it in node are not the caller's). */
  describe(skip: Function): ExitCause | undefined {
    const exitCall = captureStack(skip);
    const cause: ExitCause = {
      ...(exitCall.length > 0 ? { exitCall } : {}),
      ...(this.uncaught !== undefined ? { uncaught: this.uncaught } : {}),
    };
    return cause.exitCall !== undefined || cause.uncaught !== undefined ? cause : undefined;
  }
}
