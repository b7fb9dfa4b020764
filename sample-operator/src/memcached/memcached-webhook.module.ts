import { Module } from '@nestjs/common';
import { MemcachedQuotas } from './memcached-quota.js';
import { MemcachedWebhook } from './memcached.webhook.js';

/** Memcached admission, apart from the controller: an app may run either without the other. */
@Module({ providers: [MemcachedQuotas, MemcachedWebhook] })
export class MemcachedWebhookModule {}
