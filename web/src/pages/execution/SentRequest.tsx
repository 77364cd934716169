import { JsonView } from '../../components/JsonView';
import type { SentRequest as Sent } from '../../types';
import { TableWrap } from '../../components/TableWrap';

/** A JSON body shown as JSON (parsed), any other as the text sent. */
function parsedBody(request: Sent): { json: true; value: unknown } | { json: false; text: string } | null {
  const body = request.body;
  if (body === undefined) return null;
  if (typeof body !== 'string') return { json: true, value: body };
  if (/json/i.test(request.contentType ?? '') && !request.bodyTruncated) {
    try {
      return { json: true, value: JSON.parse(body) };
    } catch {
      // Sent as JSON but not JSON (a template that produced text): shown as the text it was.
    }
  }
  return { json: false, text: body };
}

/**
 * The request an `http` step sent (its record's `request`): method and URL, content type, headers
 * and body, as the engine recorded them (a credential's or a secret's value as "***").
 */
export function SentRequest({ request, name }: { request: Sent; name: string }) {
  const body = parsedBody(request);
  const headers = Object.entries(request.headers ?? {});
  return (
    <div className="sent-request" data-testid="sent-request">
      <p className="sent-request-line">
        <strong>{request.method}</strong> <code>{request.url}</code>
      </p>
      <p className="small">
        Content type:{' '}
        {request.contentType ? <code>{request.contentType}</code> : <span className="muted">none</span>}
      </p>
      {headers.length > 0 && (
        <TableWrap label={`Headers sent by ${name}`}>
          <table className="data-table field-table">
            <caption className="visually-hidden">Headers sent by {name}</caption>
            <thead>
              <tr>
                <th scope="col">Header</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {headers.map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">
                    <code>{k}</code>
                  </th>
                  <td className="value-cell">{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {body === null ? (
        <p className="small muted">No body.</p>
      ) : body.json ? (
        <JsonView value={body.value} label={`Body sent by ${name}`} />
      ) : (
        <figure className="json-view" aria-label={`Body sent by ${name}`}>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling <pre> must be reachable from the keyboard to scroll it */}
          <pre tabIndex={0}>{body.text}</pre>
        </figure>
      )}
      {request.bodyTruncated && <p className="small muted">The body is cut at 64 KiB in the record.</p>}
    </div>
  );
}
