import { Module } from '@nestjs/common';
import { MEMCACHED_IMAGE, MemcachedController } from './memcached.controller.js';
import { MemcachedConversion } from './memcached.conversion.js';
import { DEFAULT_MEMCACHED_IMAGE } from './memcached.deployment.js';

@Module({
  providers: [
    MemcachedController,
    MemcachedConversion,
    { provide: MEMCACHED_IMAGE, useFactory: () => process.env.MEMCACHED_IMAGE || DEFAULT_MEMCACHED_IMAGE },
  ],
})
export class MemcachedModule {}
