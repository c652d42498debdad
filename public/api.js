// Calls to the voxreel API from the page: the API key, the documented error body, and the same call as curl.

const KEY_STORAGE = 'voxreel.apiKey';

export function apiKey() {
  try {
    return localStorage.getItem(KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

export function setApiKey(key) {
  try {
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    // Storage refused (private mode): the key is then asked for again on the next visit.
  }
}

/** An answer other than 2xx, as the API describes it: `{ status: "error", error: { code, message, field, requestId } }`. */
export class ApiError extends Error {
  constructor(status, { code = '', message = '', field, requestId } = {}, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }
}

/** fetch() with the key, a JSON or multipart body, and non-2xx answers thrown as ApiError. */
export async function api(path, { method = 'GET', json, form } = {}) {
  const headers = {};
  const key = apiKey();
  if (key) headers.authorization = `Bearer ${key}`;
  let body;
  if (json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = form;
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body });
  } catch (cause) {
    throw new ApiError(0, { code: 'NETWORK_ERROR', message: `The server could not be reached (${cause.message}).` });
  }
  if (!response.ok) throw await apiError(response);
  return response;
}

async function apiError(response) {
  const text = await response.text();
  let error;
  try {
    error = JSON.parse(text).error;
  } catch {
    error = undefined;
  }
  const described = error && typeof error.message === 'string' ? error : { message: text.trim().slice(0, 500) || response.statusText };
  return new ApiError(response.status, described, response.headers.get('retry-after'));
}

/** Fills `region` with the error exactly as the API gave it, and shows it. */
export function showError(region, error) {
  region.replaceChildren();
  const head = document.createElement('p');
  const title = document.createElement('strong');
  if (error instanceof ApiError) {
    title.textContent = [error.status || '', error.code].filter(Boolean).join(' ');
    head.append(title, ' ', error.message);
    region.append(head);
    const details = [
      error.field && `field: ${error.field}`,
      error.retryAfter && `retry after ${error.retryAfter} s`,
      error.requestId && `request id: ${error.requestId}`,
    ].filter(Boolean);
    if (details.length > 0) {
      const more = document.createElement('p');
      more.className = 'detail';
      more.textContent = details.join(' · ');
      region.append(more);
    }
  } else {
    title.textContent = 'Error';
    head.append(title, ' ', error instanceof Error ? error.message : String(error));
    region.append(head);
  }
  region.hidden = false;
}

export function clearError(region) {
  region.hidden = true;
  region.replaceChildren();
}

function shellQuote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** The same call as a curl command: JSON body or one uploaded file; the key as $VOXREEL_KEY, never the key itself. */
export function curlCommand(path, { json, file } = {}) {
  const parts = [`curl -s ${shellQuote(new URL(path, location.origin).href)}`];
  if (apiKey()) parts.push('-H "authorization: Bearer $VOXREEL_KEY"');
  if (json !== undefined) parts.push("-H 'content-type: application/json'", `-d ${shellQuote(JSON.stringify(json))}`);
  if (file !== undefined) parts.push(`-F ${shellQuote(`file=@${file}`)}`);
  return parts.join(' \\\n  ');
}
