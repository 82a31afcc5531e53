// The list of hotpath's commands. Each lives in its own file next to this one.

import type { Command } from '../command.js';

export const commands: readonly Command[] = [
];
