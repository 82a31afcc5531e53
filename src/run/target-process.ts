// The target: the user's command, spawned with the agent preloaded, detached into its own
// process group (so the whole tree can be signalled and Ctrl-C in the terminal reaches only
// hotpath). stdout goes straight into target.log through a file descriptor, so a target that
// prints megabytes costs hotpath nothing; stderr is teed into the same log and into a small
// in-memory tail for error messages. An orphan guard (orphan-guard.ts) stops the group should
// hotpath itself be killed without a chance to.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, openSync, readSync, fstatSync } from 'node:fs';
import { ENV, type AgentConfig } from '../agent/protocol.js';
import { hotpathError } from '../errors.js';
import { FILE_MODE } from '../run-dir/write-run-files.js';
import { targetNodeOptions } from './node-options.js';
import { OutputTail, tailLines } from './output-tail.js';
import { OrphanGuard } from './orphan-guard.js';
import { groupAlive, signalGroup, stopGroup } from './process-group.js';

export interface TargetOptions {
  command: readonly string[];
  cwd: string;
  /** The environment to start from (hotpath's own). */
  env: NodeJS.ProcessEnv;
  agentPath: string;
  socketPath: string;
  runDir: string;
  agentConfig: AgentConfig;
  logFile: string;
  /** What the orphan guard gives the group between SIGTERM and SIGKILL if hotpath dies. */
  graceMs: number;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Epoch ms. */
  at: number;
}

export function targetEnv(o: TargetOptions): NodeJS.ProcessEnv {
  return {
    ...o.env,
    NODE_OPTIONS: targetNodeOptions(o.agentPath, o.env.NODE_OPTIONS),
    [ENV.socket]: o.socketPath,
    [ENV.runDir]: o.runDir,
    [ENV.config]: JSON.stringify(o.agentConfig),
  };
}

export class TargetProcess {
  readonly pid: number;
  readonly exited: Promise<ExitStatus>;
  exitStatus?: ExitStatus;
  private readonly stderr = new OutputTail();
  private readonly logFile: string;
  /** Last resort: if hotpath itself dies, the group dies with it (no orphans). */
  private readonly onHotpathExit = () => this.killNow();

  private constructor(
    child: ChildProcess,
    logFile: string,
    private readonly guard: OrphanGuard | undefined,
  ) {
    this.pid = child.pid as number;
    this.logFile = logFile;
    const log = createWriteStream(logFile, { flags: 'a', mode: FILE_MODE });
    log.on('error', () => {
      /* the log is best effort */
    });
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.stderr?.pipe(log);
    process.on('exit', this.onHotpathExit);
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        // Most targets are one process (or die together): the guard is not needed a moment longer.
        if (!groupAlive(this.pid)) this.guard?.dismiss();
        resolve((this.exitStatus = { code, signal, at: Date.now() }));
      });
    });
  }

  /** Spawns the command; rejects with HOTPATH_ERR_SPAWN when it cannot be started at all. */
  static async start(o: TargetOptions): Promise<TargetProcess> {
    const [file, ...args] = o.command;
    const logFd = openSync(o.logFile, 'a', FILE_MODE);
    try {
      const child = spawn(file, args, {
        cwd: o.cwd,
        env: targetEnv(o),
        detached: true,
        stdio: ['ignore', logFd, 'pipe'],
      });
      // Started at once (the pid is known synchronously), while the target boots.
      const guard = child.pid === undefined ? undefined : OrphanGuard.start(child.pid, o.graceMs);
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (err: NodeJS.ErrnoException) =>
          reject(
            hotpathError('HOTPATH_ERR_SPAWN', `Cannot start \`${file}\`: ${err.code === 'ENOENT' ? 'command not found' : err.message}`, {
              cause: err,
              details: { command: o.command, errno: err.code },
            }),
          ),
        );
      }).catch((err: unknown) => {
        guard?.dismiss();
        throw err;
      });
      return new TargetProcess(child, o.logFile, guard);
    } finally {
      closeSync(logFd); // the child holds its own copy
    }
  }

  /** True while any process of the target's group runs. */
  alive(): boolean {
    return groupAlive(this.pid);
  }

  /** SIGTERM to the whole group, SIGKILL after `graceMs`. */
  async stop(graceMs: number): Promise<'empty' | 'terminated' | 'killed'> {
    const how = await stopGroup(this.pid, graceMs);
    this.release();
    // The group can be seen gone a moment before node reports the child's exit status.
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    return how;
  }

  /** SIGKILL to the whole group, synchronously (second Ctrl-C, hotpath exiting). */
  killNow(): void {
    signalGroup(this.pid, 'SIGKILL');
    // SIGKILL cannot be caught: the group is as good as gone.
    this.guard?.dismiss();
  }

  /** Removes the safety nets (exit hook, orphan guard) once the group is known to be gone. */
  release(): void {
    process.off('exit', this.onHotpathExit);
    this.guard?.dismiss();
  }

  stderrTail(n = 20): string[] {
    return this.stderr.lines(n);
  }

  /** The last lines of the whole output (stdout and stderr), read back from target.log. */
  outputTail(n = 20): string[] {
    const maxBytes = 16 * 1024;
    let fd: number | undefined;
    try {
      fd = openSync(this.logFile, 'r');
      const size = fstatSync(fd).size;
      const len = Math.min(size, maxBytes);
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, size - len);
      return tailLines(buf.toString('utf8'), n);
    } catch {
      return this.stderrTail(n);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
