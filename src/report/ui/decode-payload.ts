// Reads the run's data embedded in the page: base64 text in an inert <script> element,
// gzip-compressed JSON, inflated with the browser's DecompressionStream.

import { PAYLOAD_VERSION, type ReportPayload } from '../html/report-payload.js';

export const DATA_ELEMENT_ID = 'hotpath-data';

export async function decodePayload(doc: Document): Promise<ReportPayload> {
  const json = await decodeData(doc);
  const version = (json as { version?: unknown }).version;
  if (version !== PAYLOAD_VERSION) throw new Error(`report data version ${String(version)} is not ${PAYLOAD_VERSION}`);
  return json as ReportPayload;
}

/** The embedded data as JSON, whatever page it belongs to (report.html, compare.html). */
export async function decodeData(doc: Document): Promise<unknown> {
  const el = doc.getElementById(DATA_ELEMENT_ID);
  if (!el || !el.textContent) throw new Error('report data element is missing');
  const bin = Uint8Array.from(atob(el.textContent.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream('gzip'));
  return JSON.parse(await new Response(stream).text()) as unknown;
}
