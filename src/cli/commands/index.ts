// The list of hotpath's commands. Each lives in its own file next to this one and is loaded
// only when it runs (or for the full help): `hotpath prof` reads a tick log without loading
// the load engine, the agent launcher or the report writers of the other commands.

import type { Command } from '../command.js';

/** Each command's module by name, in the order `hotpath --help` lists them. */
export const commandLoaders: Readonly<Record<string, () => Promise<Command>>> = {
  run: async () => (await import('./run.js')).runCommand,
  report: async () => (await import('./report.js')).reportCommand,
  load: async () => (await import('./load.js')).loadCommand,
  demo: async () => (await import('./demo.js')).demoCommand,
  export: async () => (await import('./export.js')).exportCommand,
  prof: async () => (await import('./prof.js')).profCommand,
  import: async () => (await import('./import.js')).importCommand,

  compare: async () => (await import('./compare.js')).compareCommand,
};

/** The command named `name`, loading its module alone; undefined for a name that is none. */
export function loadCommand(name: string): Promise<Command> | undefined {
  return Object.hasOwn(commandLoaders, name) ? commandLoaders[name]() : undefined;
}

/** Every command (for the help that lists them all). */
export function loadCommands(): Promise<Command[]> {
  return Promise.all(Object.values(commandLoaders).map((load) => load()));
}
