/**
 * Functions a query may call: an allow-list of pure computations over the row and its aggregates.
 * Anything that reads outside the row (dictionaries, joinGet, file, url, remote, s3, input, models,
 * server or cluster introspection, settings, macros) is absent by construction, and so is anything
 * added to ClickHouse later until someone puts it here. Names compare case-insensitively, as most
 * ClickHouse functions do.
 */
const SCALAR = `
plus minus multiply divide intDiv intDivOrZero modulo moduloOrZero negate abs gcd lcm
equals notEquals less greater lessOrEquals greaterOrEquals and or not xor
in notIn nullIn notNullIn like notLike ilike notILike match extract extractAll multiSearchAny
position positionCaseInsensitive positionUTF8 countSubstrings startsWith endsWith
if multiIf ifNull nullIf coalesce isNull isNotNull assumeNotNull toNullable isNaN isFinite isInfinite
greatest least
tuple tupleElement array arrayElement map mapKeys mapValues mapContains mapContainsKey
has hasAll hasAny indexOf length empty notEmpty arrayJoin range arrayMap arrayFilter arrayExists
arrayAll arrayCount arraySum arrayAvg arrayMin arrayMax arraySort arrayReverseSort arrayReverse
arrayDistinct arrayUniq arrayConcat arraySlice arrayPushBack arrayPushFront arrayEnumerate
arrayEnumerateUniq arrayFirst arrayLast arrayCumSum arrayDifference arrayZip arrayFlatten
arrayStringConcat arrayIntersect splitByChar splitByString splitByRegexp lambda
lower upper lowerUTF8 upperUTF8 concat concatWithSeparator substring substr substringUTF8 trim
trimLeft trimRight trimBoth replace replaceAll replaceOne replaceRegexpAll replaceRegexpOne
leftPad rightPad left right reverse repeat format lengthUTF8 char_length
toString toFixedString toInt8 toInt16 toInt32 toInt64 toUInt8 toUInt16 toUInt32 toUInt64 toFloat32
toFloat64 toDecimal32 toDecimal64 toInt32OrNull toInt64OrNull toFloat64OrNull toInt32OrZero
toInt64OrZero toFloat64OrZero toUUID toUUIDOrNull toBool CAST accurateCastOrNull toTypeName
reinterpretAsString hex unhex
round roundBankers floor ceil ceiling trunc truncate sqrt cbrt exp log log2 log10 ln pow power
sign sin cos tan atan atan2 pi e intExp2 intExp10 exp2 exp10 widthBucket
now now64 today yesterday toDate toDate32 toDateTime toDateTime64 toDateOrNull toDateTimeOrNull
parseDateTimeBestEffort parseDateTimeBestEffortOrNull parseDateTime64BestEffort
parseDateTime64BestEffortOrNull
toYear toQuarter toMonth toDayOfYear toDayOfMonth toDayOfWeek toHour toMinute toSecond
toMillisecond toUnixTimestamp toUnixTimestamp64Milli toUnixTimestamp64Micro
fromUnixTimestamp fromUnixTimestamp64Milli fromUnixTimestamp64Micro
toStartOfYear toStartOfQuarter toStartOfMonth toStartOfWeek toMonday toStartOfDay toStartOfHour
toStartOfMinute toStartOfSecond toStartOfFiveMinutes toStartOfTenMinutes toStartOfFifteenMinutes
toStartOfInterval toYYYYMM toYYYYMMDD toISOWeek toISOYear toRelativeDayNum toRelativeHourNum
toTimeZone toTimezone timeZoneOf formatDateTime dateDiff date_diff age dateTrunc date_trunc
dateAdd dateSub date_add date_sub addSeconds addMinutes addHours addDays addWeeks addMonths
addYears subtractSeconds subtractMinutes subtractHours subtractDays subtractWeeks subtractMonths
subtractYears timeSlot
toIntervalSecond toIntervalMinute toIntervalHour toIntervalDay toIntervalWeek toIntervalMonth
toIntervalQuarter toIntervalYear toIntervalMillisecond toIntervalMicrosecond
cityHash64 sipHash64 xxHash64 murmurHash3_64 farmHash64 intHash32 intHash64
row_number rank dense_rank percent_rank cume_dist ntile lag lead lagInFrame leadInFrame
first_value last_value nth_value
exists
`;

const AGGREGATE = `
count sum avg min max any anyLast anyHeavy argMin argMax uniq uniqExact uniqCombined
uniqCombined64 uniqHLL12 uniqTheta median medianExact quantile quantiles quantileExact
quantilesExact quantileTiming quantileTDigest quantilesTDigest stddevPop stddevSamp varPop varSamp
covarPop covarSamp corr groupArray groupUniqArray groupArraySorted topK topKWeighted
sumMap minMap maxMap avgWeighted simpleLinearRegression histogram windowFunnel retention
sequenceMatch sequenceCount groupBitAnd groupBitOr groupBitXor entropy skewPop kurtPop
`;

// Aggregate combinators, stripped from the end of a name until the base is known.
const COMBINATORS = [
  "If",
  "Array",
  "Distinct",
  "OrNull",
  "OrDefault",
  "Map",
  "ForEach",
  "Merge",
  "State",
  "Resample",
];

const words = (list: string) => list.trim().split(/\s+/);
const SCALARS = new Set(words(SCALAR).map((f) => f.toLowerCase()));
const AGGREGATES = new Set(words(AGGREGATE).map((f) => f.toLowerCase()));

export function isAllowedFunction(name: string): boolean {
  const lower = name.toLowerCase();
  return SCALARS.has(lower) || isAggregate(name);
}

function isAggregate(name: string): boolean {
  let base = name;
  for (;;) {
    if (AGGREGATES.has(base.toLowerCase())) {
      return true;
    }
    const suffix = COMBINATORS.find((c) => base.length > c.length && base.endsWith(c));
    if (!suffix) {
      return false;
    }
    base = base.slice(0, -suffix.length);
  }
}

/** IN and its variants: a bare name on the right would be read as a table. */
export const IN_FUNCTIONS = new Set([
  "in",
  "notin",
  "globalin",
  "globalnotin",
  "nullin",
  "notnullin",
  "globalnullin",
  "globalnotnullin",
]);
