import { Module } from '@nestjs/common';
import { CacheDirectory, InMemoryCacheDirectory } from './cache-directory.js';
import { CacheClusterController } from './cache-cluster.controller.js';
import { CacheClusterWebhook } from './cache-cluster.webhook.js';

@Module({
  providers: [
    CacheClusterController,
    CacheClusterWebhook,
    // The sample's stand-in for the directory's API: provide a real client here.
    { provide: CacheDirectory, useClass: InMemoryCacheDirectory },
  ],
})
export class CacheClusterModule {}
