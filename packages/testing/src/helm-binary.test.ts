import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ensureHelm, helmCacheDir, helmVersion } from './helm-binary.js';

describe('ensureHelm', () => {
  it('reads the helm version the Go module pins, and keys the cache by it', () => {
    assert.match(helmVersion(), /^v4\.\d+\.\d+$/);
    const dir = helmCacheDir(undefined, { NESTOR_CACHE_DIR: '/cache' });
    assert.match(dir, new RegExp(`^/cache/helm/${helmVersion().replaceAll('.', '\\.')}-[0-9a-f]{12}$`));
  });

  it('takes NESTOR_HELM when it is an executable, and says what is wrong when it is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nestor-helm-bin-'));
    try {
      const helm = join(dir, 'helm');
      await writeFile(helm, '#!/bin/sh\n');
      await assert.rejects(ensureHelm({ env: { NESTOR_HELM: helm } }), /NESTOR_HELM=\S+ is not an executable file/);
      await chmod(helm, 0o755);
      assert.equal(await ensureHelm({ env: { NESTOR_HELM: helm } }), helm);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails saying why when there is no helm and no Go to build one', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'nestor-helm-cache-'));
    try {
      await assert.rejects(
        ensureHelm({ env: { NESTOR_CACHE_DIR: cache, GO: join(cache, 'no-go') } }),
        /Cannot build helm: Go is not installed .* or set NESTOR_HELM to a helm v4 binary/,
      );
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });
});
