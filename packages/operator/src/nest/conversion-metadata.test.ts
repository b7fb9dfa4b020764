import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CustomResource } from '../crd/custom-resource.decorator.js';
import { converterOf, readConversionDefinition } from './conversion-metadata.js';
import { Conversion, ConvertFromHub, ConvertToHub } from './decorators/conversion.decorator.js';

// Each case gets a kind of its own: every loaded version of a kind must convert.
const version = (kind: string, version: string, group = 'convert.example.com') => {
  @CustomResource({ group, version, kind })
  class Version {}
  Object.defineProperty(Version, 'name', { value: `${kind}${version.toUpperCase()}` });
  return Version;
};

interface Thing {
  spec: { replicas?: number; size?: number };
}

const [ThingV2, ThingV1] = [version('Thing', 'v2'), version('Thing', 'v1')];

@Conversion(ThingV2, { keepLostData: false })
class ThingConversion {
  readonly factor = 1;
  @ConvertToHub(ThingV1) toHub(spoke: Thing) {
    return { spec: { replicas: spoke.spec.size! * this.factor } };
  }
  @ConvertFromHub(ThingV1) fromHub(hub: Thing) {
    return { spec: { size: hub.spec.replicas } };
  }
}

const errorOf = (target: new () => unknown) => {
  try {
    readConversionDefinition(target as never);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('no error');
};

describe('readConversionDefinition', () => {
  it('reads the hub, each spoke’s methods and the options; undefined for other classes', () => {
    const definition = readConversionDefinition(ThingConversion)!;
    assert.equal(definition.crdName, 'things.convert.example.com');
    assert.equal(definition.hubVersion, 'v2');
    assert.deepEqual(definition.spokes, [{ version: 'v1', spoke: ThingV1, toHub: 'toHub', fromHub: 'fromHub' }]);
    assert.deepEqual(definition.options, { keepLostData: false });
    assert.equal(readConversionDefinition(class Plain {}), undefined);
  });

  it('makes a converter that calls the instance’s methods', async () => {
    const converter = converterOf(readConversionDefinition(ThingConversion)!, new ThingConversion() as never);
    const hub = await converter.convert(
      { apiVersion: 'convert.example.com/v1', kind: 'Thing', metadata: { name: 'a' }, spec: { size: 2 } },
      'convert.example.com/v2',
    );
    assert.deepEqual(hub.spec, { replicas: 2 });
  });

  it('says what to fix when the decorators are misused', () => {
    const [HubA, SpokeA] = [version('Alpha', 'v2'), version('Alpha', 'v1')];
    @Conversion(HubA)
    class OneWay {
      @ConvertToHub(SpokeA) toHub() {}
    }
    assert.match(
      errorOf(OneWay),
      /OneWay has @ConvertToHub\(AlphaV1\) but no @ConvertFromHub\(AlphaV1\): add a method \(hub: AlphaV2\) => AlphaV1/,
    );

    class NotAKind {}
    @Conversion(NotAKind)
    class BadHub {}
    assert.match(
      errorOf(BadHub),
      /BadHub: @Conversion\(NotAKind\) needs the hub's class, decorated with @CustomResource/,
    );

    const HubB = version('Beta', 'v2');
    @Conversion(HubB)
    class Empty {}
    assert.match(errorOf(Empty), /Empty is decorated with @Conversion\(BetaV2\) but has no conversion methods/);

    const [HubC, OtherKind] = [version('Gamma', 'v2'), version('Delta', 'v1')];
    @Conversion(HubC)
    class WrongKind {
      @ConvertToHub(OtherKind) a() {}
      @ConvertFromHub(OtherKind) b() {}
    }
    assert.match(
      errorOf(WrongKind),
      /WrongKind: @ConvertToHub\(DeltaV1\): DeltaV1 is convert.example.com Delta, not a version of the hub GammaV2/,
    );

    const HubD = version('Epsilon', 'v2');
    @Conversion(HubD)
    class HubAsSpoke {
      @ConvertToHub(HubD) a() {}
    }
    assert.match(errorOf(HubAsSpoke), /EpsilonV2 is v2, the hub's version: the hub needs no conversion/);

    const [HubE, SpokeE] = [version('Zeta', 'v2'), version('Zeta', 'v1')];
    @Conversion(HubE)
    class Twice {
      @ConvertToHub(SpokeE) a() {}
      @ConvertToHub(SpokeE) b() {}
      @ConvertFromHub(SpokeE) c() {}
    }
    assert.match(errorOf(Twice), /Twice has 2 @ConvertToHub\(ZetaV1\) methods \(a, b\)/);

    @Conversion(HubE)
    class TwoMarks {
      @ConvertToHub(SpokeE) @ConvertFromHub(SpokeE) a() {}
    }
    assert.match(errorOf(TwoMarks), /TwoMarks.a\(\) has several conversion decorators/);

    const [HubF, SpokeF] = [version('Eta', 'v2'), version('Eta', 'v1')];
    const Forgotten = version('Eta', 'v1beta1');
    @Conversion(HubF)
    class Incomplete {
      @ConvertToHub(SpokeF) a() {}
      @ConvertFromHub(SpokeF) b() {}
    }
    assert.match(
      errorOf(Incomplete),
      new RegExp(
        `Incomplete converts Eta, whose version v1beta1 \\(${Forgotten.name}\\) has no conversion: add @ConvertToHub\\(EtaV1BETA1\\)`,
      ),
    );
  });
});
