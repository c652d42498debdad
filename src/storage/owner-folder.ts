import { createHash } from 'node:crypto';

/**
 * The folder of one owner's uploads (assets, lexicons): a digest of the owner (an API key's id or an address), never
 * the owner itself. Base64url, so never a dot-folder.
 */
export function ownerFolder(owner: string): string {
  return createHash('sha256').update(owner).digest('base64url').slice(0, 22);
}
