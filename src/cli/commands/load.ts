// `hotpath load <url>`: drive HTTP load at a server and print what it measured.
// Progress and the results table go to stderr; `--json` prints only the LoadResult on stdout.

import type { Command } from '../command.js';
import { styler } from '../io.js';
import { hotpathError } from '../../errors.js';
import { load } from '../../load/load.js';
import { DEFAULT_DURATION_S, loadCommandSpecs } from '../../load/load-options.js';
import { formatProgress, formatResult } from '../../load/format-result.js';
import { noResponsesReason } from '../../load/no-responses.js';
import type { LoadOptions } from '../../load/load-plan.js';

export const loadCommand: Command = {
  name: 'load',
  summary: 'Drive HTTP load at a URL and report latency percentiles, throughput and errors',
  usage: 'hotpath load [options] <url>',
  options: loadCommandSpecs,
  apiChecksOptions: true,
  details: [
    'Examples:',
    '  hotpath load http://127.0.0.1:3000/ -c 100 -d 30s',
    '  hotpath load http://127.0.0.1:3000/ -R 2000 -d 20s        open model, corrected latency',
    '  hotpath load http://127.0.0.1:3000/api -m POST -H "content-type: application/json" -b \'{"a":1}\'',
    '  hotpath load http://localhost/ --socket /tmp/app.sock --json > result.json',
    '',
    'Docs: docs/load.md; the JSON schema: docs/load-result.md',
  ].join('\n'),
  async run(args, io) {
    const [url, ...extra] = args.positionals;
    if (url === undefined) {
      throw hotpathError('HOTPATH_ERR_MISSING_ARGUMENT', 'The URL to load is missing, e.g. hotpath load http://127.0.0.1:3000/', {
        showUsage: true,
      });
    }
    if (extra.length > 0) {
      throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `Unexpected argument ${JSON.stringify(extra[0])}: give one URL`, {
        showUsage: true,
      });
    }
    const { json, ...flags } = args.values;
    const controller = new AbortController();
    const onSigint = () => controller.abort('interrupted (Ctrl-C)');
    process.once('SIGINT', onSigint);
    const live = io.interactive && json !== true;
    const planned =
      flags.amount === undefined
        ? { seconds: (flags.duration as number | undefined) ?? DEFAULT_DURATION_S }
        : { amount: flags.amount as number };
    try {
      const result = await load(
        { ...(flags as Omit<LoadOptions, 'url'>), url, signal: controller.signal },
        {
          onProgress: live ? (p) => io.stderr.write(`\r\u001b[2K${formatProgress(p, planned)}`) : undefined,
          onPhase: (phase) => {
            if (phase === 'load-end' && live) io.stderr.write('\r\u001b[2K');
            else if (phase === 'warmup-start' && live) io.stderr.write(`warming up for ${String(flags.warmup)} s\n`);
          },
        },
      );
      if (json === true) io.stdout.write(JSON.stringify(result, null, 2) + '\n');
      else io.stderr.write(formatResult(result, styler(io)));
      const nothing = noResponsesReason(result);
      if (nothing !== undefined) throw hotpathError('HOTPATH_ERR_NO_RESPONSES', nothing);
      return 0;
    } finally {
      process.removeListener('SIGINT', onSigint);
    }
  },
};
