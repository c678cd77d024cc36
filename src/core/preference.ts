/**
 * The order in which the configured providers serve each currency: first the currency's own
 * central bank (a configured central bank whose base it is: the NBU for UAH, the CNB for CZK, the
 * Bank of Canada for CAD, the ECB for EUR), then every provider in the configured order
 * (EXRATES_PROVIDERS). A bank's own currency is the one whose rate it fixes officially, the number
 * that country's accounts and contracts are booked at; for any other currency the configured order
 * decides.
 */

/** The providers in the order they serve one currency. */
export type ServingOrder = (code: string) => readonly string[];

/** A configured central bank and the currency it issues (its base). */
export interface CentralBank {
  id: string;
  base: string;
}

export function servingOrder(providers: readonly string[], centralBanks: readonly CentralBank[]): ServingOrder {
  const own = new Map<string, string[]>();
  for (const id of providers) {
    const bank = centralBanks.find((b) => b.id === id);
    if (bank !== undefined) own.set(bank.base, [...(own.get(bank.base) ?? []), id]);
  }
  const orders = new Map([...own].map(([code, banks]) => [code, [...banks, ...providers.filter((id) => !banks.includes(id))]]));
  return (code) => orders.get(code) ?? providers;
}
