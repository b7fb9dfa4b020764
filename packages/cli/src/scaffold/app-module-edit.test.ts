import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addModuleImport } from './app-module-edit.js';

const IMPORT = "import { OperatorModule } from '@nestor/operator';";
const ENTRY = 'OperatorModule.forRoot()';
const PRESENT = /\bOperatorModule\b/;

const STARTER = `import { Module } from '@nestjs/common';
import { AppController } from './app.controller.js';
import { AppService } from './app.service.js';

@Module({
  imports: [],
  controllers: [AppController],
  providers: [AppService],
})
export class AppModule {}
`;

describe('addModuleImport', () => {
  it('adds the entry to an empty imports array and the import after the last import', () => {
    const edit = addModuleImport(STARTER, IMPORT, ENTRY, PRESENT);
    assert.ok('source' in edit);
    assert.equal(
      edit.source,
      STARTER.replace("service.js';\n", `service.js';\n${IMPORT}\n`).replace('imports: [],', `imports: [${ENTRY}],`),
    );
  });

  it('appends to a multi-line array in its indentation, keeping what was there', () => {
    const source = `import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true }),
    CacheModule.register([1, 2]), // a comment with ] in it
  ],
})
export class AppModule {}
`;
    const edit = addModuleImport(source, IMPORT, ENTRY, PRESENT);
    assert.ok('source' in edit);
    assert.match(
      edit.source,
      /imports: \[\n {4}ConfigModule\.forRoot\(\{ isGlobal: true \}\),\n {4}CacheModule\.register\(\[1, 2\]\), \/\/ a comment with \] in it\n {4}OperatorModule\.forRoot\(\),\n {2}\],/,
    );
    assert.match(edit.source, /@nestjs\/config';\nimport \{ OperatorModule \}/);
  });

  it('appends to a one-line array', () => {
    const edit = addModuleImport(`@Module({ imports: [A, B] })\nexport class AppModule {}\n`, IMPORT, ENTRY, PRESENT);
    assert.ok('source' in edit);
    assert.match(edit.source, /imports: \[A, B, OperatorModule\.forRoot\(\)\]/);
    assert.ok(edit.source.startsWith(`${IMPORT}\n`), 'no import statements: the import goes first');
  });

  it('changes nothing the second time', () => {
    const once = addModuleImport(STARTER, IMPORT, ENTRY, PRESENT);
    assert.ok('source' in once);
    const twice = addModuleImport(once.source, IMPORT, ENTRY, PRESENT);
    assert.deepEqual(twice, { source: once.source, changed: false });
  });

  it('says why when the module has no imports array or no @Module', () => {
    assert.deepEqual(addModuleImport('@Module({ providers: [A] })\nclass M {}', IMPORT, ENTRY, PRESENT), {
      error: 'the @Module has no `imports: [` array',
    });
    assert.deepEqual(addModuleImport('export const x = { imports: [] };', IMPORT, ENTRY, PRESENT), {
      error: 'no @Module( decorator in the file',
    });
  });
});
