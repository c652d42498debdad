import { AppError } from '../errors.js';

/**
 * ASSET_QUOTA_MB held atomically: each owner's uploads being admitted reserve their bytes beside what the owner
 * keeps, and one owner's reservations and releases take turns, so concurrent uploads cannot each see room for
 * themselves alone and pass the quota together (12 at once did, 3.5 times over). One process's uploads: instances
 * that share a folder do not see each other's reservations.
 */
export class AssetQuota {
  private readonly reserved = new Map<string, number>();
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly quotaBytes: number,
    /** Bytes of the owner's assets stored now. */
    private readonly usage: (owner: string) => Promise<number>,
  ) {}

  /**
   * Reserves `bytes` for `owner`, or refuses them (507 ASSET_QUOTA_EXCEEDED); the release, called once the asset is
   * stored (its bytes then counted by `usage`) or refused, gives them back.
   */
  async reserve(owner: string, bytes: number): Promise<() => Promise<void>> {
    if (this.quotaBytes <= 0) return async () => undefined;
    await this.inTurn(owner, async () => {
      const used = (await this.usage(owner)) + (this.reserved.get(owner) ?? 0);
      if (used + bytes > this.quotaBytes) {
        throw new AppError('ASSET_QUOTA_EXCEEDED', {
          field: 'file',
          message: `Your assets take ${used} bytes (stored or being checked) and this file ${bytes}; at most ${this.quotaBytes} bytes are kept per client. Delete some (DELETE /assets/{id}) or wait until they expire.`,
        });
      }
      this.reserved.set(owner, (this.reserved.get(owner) ?? 0) + bytes);
    });
    // In turn too: a reservation given back between another upload's reading of the folder and its check would count nowhere.
    return () =>
      this.inTurn(owner, async () => {
        const left = (this.reserved.get(owner) ?? 0) - bytes;
        if (left > 0) this.reserved.set(owner, left);
        else this.reserved.delete(owner);
      });
  }

  private inTurn(owner: string, work: () => Promise<void>): Promise<void> {
    const run = (this.turns.get(owner) ?? Promise.resolve()).then(work);
    const settled = run.catch(() => undefined);
    this.turns.set(owner, settled);
    void settled.then(() => {
      if (this.turns.get(owner) === settled) this.turns.delete(owner);
    });
    return run;
  }
}
