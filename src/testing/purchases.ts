import type { HttpClient, HttpResponse } from './http-client.js';

/** The card number the sandbox partner pays with (see the sandbox partner for the declining ones). */
export const GOOD_CARD = '4242424242424242';

export interface StartedPurchase {
  paymentIntentId: string;
  clientSecret: string;
  orderId: string;
  transactionId: string;
  // biome-ignore lint/suspicious/noExplicitAny: the rest of the intent is asserted field by field
  [field: string]: any;
}

/** The core API's checkout (`POST /v1/stripe/create-payment-intent`); the 201 intent. */
export async function startPurchase(
  server: { api: HttpClient },
  productId: string,
  email = 'buyer@example.com',
): Promise<StartedPurchase> {
  return (await server.api.post('/stripe/create-payment-intent', { productId, email })).expect(201).body;
}

/** `POST /v1/stripe/confirm-payment` for a started intent; testCard only means something to the sandbox. */
export function confirmPurchase(
  server: { api: HttpClient },
  intent: { paymentIntentId: string; clientSecret: string },
  testCard?: string,
): Promise<HttpResponse> {
  return server.api.post('/stripe/confirm-payment', {
    paymentIntentId: intent.paymentIntentId,
    clientSecret: intent.clientSecret,
    ...(testCard ? { testCard } : {}),
  });
}

/** A purchase paid with the sandbox partner's good card: the intent and the 200 confirmation body. */
export async function buyWithSandbox(
  server: { api: HttpClient },
  productId: string,
  email = 'buyer@example.com',
  card = GOOD_CARD,
) {
  const intent = await startPurchase(server, productId, email);
  // biome-ignore lint/suspicious/noExplicitAny: the confirmation is asserted field by field
  const paid: any = (await confirmPurchase(server, intent, card)).expect(200).body;
  return { intent, paid };
}
