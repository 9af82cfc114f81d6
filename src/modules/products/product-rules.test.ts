import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../platform/errors.js';
import type { Tier } from '../../platform/http/principal.js';
import { checkProductRules, checkTierGates, PRODUCT_DEFAULTS, type ProductState } from './product-rules.js';

const base: ProductState = {
  ...PRODUCT_DEFAULTS,
  licenseEmails: [],
  features: [],
  appId: '00000000-0000-7000-8000-000000000001',
  name: 'P',
  price: 10,
  currency: 'USD',
  callbackSecret: 'cbs_x',
};

const fieldsOf = (fn: () => void): string[] => {
  try {
    fn();
    return [];
  } catch (error) {
    assert.ok(error instanceof AppError);
    return (error.details ?? []).map((d) => d.field);
  }
};

describe('product coherence', () => {
  const cases: [string, Partial<ProductState>, string[]][] = [
    ['a plain one-time licence', {}, []],
    [
      'a monthly subscription',
      { productType: 'subscription', billingType: 'recurring', interval: 'month' },
      [],
    ],
    [
      'a yearly licence renewal',
      { billingType: 'recurring', interval: 'year', partnerPriceIdRecurring: 'price_1' },
      [],
    ],
    ['recurring without interval', { billingType: 'recurring' }, ['interval']],
    ['one-time with interval', { interval: 'year' }, ['interval']],
    ['subscription billed once', { productType: 'subscription' }, ['billingType']],
    ['partner price on one-time', { partnerPriceIdRecurring: 'price_1' }, ['partnerPriceIdRecurring']],
    ['cents on yen', { currency: 'JPY', price: 100.5 }, ['price']],
    ['three decimals on dinar', { currency: 'KWD', price: 1.234 }, []],
    ['unknown currency', { currency: 'QQQ' }, ['currency']],
  ];
  for (const [label, change, fields] of cases) {
    test(label, () =>
      assert.deepEqual(
        fieldsOf(() => checkProductRules({ ...base, ...change })),
        fields,
      ),
    );
  }
});

describe('tier gates', () => {
  const cases: [string, Tier, Record<string, unknown>, Partial<ProductState>, string[]][] = [
    ['crypto at pro', 'pro', { cryptoPaymentsEnabled: true }, {}, ['cryptoPaymentsEnabled']],
    ['crypto at business', 'business', { cryptoPaymentsEnabled: true }, {}, []],
    [
      'turning crypto off at free',
      'free',
      { cryptoPaymentsEnabled: false },
      { cryptoPaymentsEnabled: true },
      [],
    ],
    [
      'every enterprise gate at business',
      'business',
      {
        hideEmail: true,
        autoRedirect: true,
        sendLicenseToCustomer: true,
        licenseEmails: ['a@b.co'],
        callbackSecret: 's'.repeat(40),
      },
      {},
      ['hideEmail', 'autoRedirect', 'licenseEmails', 'sendLicenseToCustomer', 'callbackSecret'],
    ],
    ['an empty e-mail list at free', 'free', { licenseEmails: [] }, {}, []],
    [
      'an unchanged e-mail list after a downgrade',
      'free',
      { licenseEmails: ['a@b.co'] },
      { licenseEmails: ['a@b.co'] },
      [],
    ],
    [
      'a changed e-mail list after a downgrade',
      'free',
      { licenseEmails: ['c@d.co'] },
      { licenseEmails: ['a@b.co'] },
      ['licenseEmails'],
    ],
    [
      'the current secret sent back at free',
      'free',
      { callbackSecret: 'cbs_same' },
      { callbackSecret: 'cbs_same' },
      [],
    ],
    ['everything at enterprise', 'enterprise', { hideEmail: true, cryptoPaymentsEnabled: true }, {}, []],
  ];
  for (const [label, tier, input, current, fields] of cases) {
    test(label, () =>
      assert.deepEqual(
        fieldsOf(() => checkTierGates(tier, input, { ...PRODUCT_DEFAULTS, ...current })),
        fields,
      ),
    );
  }
});
