// Test helper: the text of a report.html with its embedded run data decoded (the page carries
// it gzipped and base64-encoded, so a plain search of the file would find nothing in it).
import { gunzipSync } from 'node:zlib';

export function htmlWithPayload(html: string): string {
  const m = /id="hotpath-data">([A-Za-z0-9+/=]+)<\/script>/.exec(html);
  if (m === null) throw new Error('report.html has no data element');
  return html + '\n' + gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8');
}
