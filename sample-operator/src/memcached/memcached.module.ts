import { Module } from '@nestjs/common';
import { MEMCACHED_IMAGE, MemcachedController } from './memcached.controller.js';
import { DEFAULT_MEMCACHED_IMAGE } from './memcached.deployment.js';

@Module({
  providers: [
    MemcachedController,
    { provide: MEMCACHED_IMAGE, useFactory: () => process.env.MEMCACHED_IMAGE || DEFAULT_MEMCACHED_IMAGE },
  ],
})
export class MemcachedModule {}
