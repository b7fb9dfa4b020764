import { Module, type DynamicModule } from '@nestjs/common';
import { InventoryController } from './inventory.controller.js';
import { INVENTORY_OPTIONS, type InventoryOptions } from './inventory.options.js';
import { RecordStore } from './record-store.js';

@Module({})
export class InventoryModule {
  static forRoot(options: InventoryOptions): DynamicModule {
    return {
      module: InventoryModule,
      providers: [
        { provide: INVENTORY_OPTIONS, useValue: options },
        { provide: RecordStore, useFactory: () => new RecordStore(options.records) },
        InventoryController,
      ],
      exports: [RecordStore],
    };
  }
}
