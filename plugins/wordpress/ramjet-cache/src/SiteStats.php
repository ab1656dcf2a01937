<?php
/**
 * SiteStats: this site's cache numbers from ramjet, for the dashboard
 * widget and the admin bar.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Reads this site's stats through the admin client once per request and
 * says what they mean: percentages, and why a URL was not cached.
 */
class SiteStats {

	/**
	 * Admin API client.
	 *
	 * @var AdminClient
	 */
	private $client;

	/**
	 * This site's host, as ramjet routes it.
	 *
	 * @var string
	 */
	private $host;

	/**
	 * The answer, once read.
	 *
	 * @var array|\WP_Error|null
	 */
	private $stats = null;

	/**
	 * Stats of the site at $host read through $client.
	 *
	 * @param AdminClient $client Admin API client.
	 * @param string      $host   This site's host.
	 */
	public function __construct( AdminClient $client, $host ) {
		$this->client = $client;
		$this->host   = $host;
	}

	/**
	 * Whether ramjet's admin URL is set.
	 *
	 * @return bool
	 */
	public function configured() {
		return $this->client->configured();
	}

	/**
	 * This site's stats (AdminClient::site_stats), read on first use.
	 *
	 * @return array|\WP_Error
	 */
	public function get() {
		if ( null === $this->stats ) {
			$this->stats = $this->client->site_stats( $this->host );
		}
		return $this->stats;
	}

	/**
	 * A ratio (0 to 1) as a percentage with one decimal.
	 *
	 * @param float $ratio Ratio.
	 * @return string
	 */
	public static function percent( $ratio ) {
		return number_format_i18n( 100 * (float) $ratio, 1 ) . '%';
	}

	/**
	 * What a reason of ramjet's list (a Cache-Status detail or forward
	 * reason) means for the site's owner.
	 *
	 * @param string $reason Reason.
	 * @return string
	 */
	public static function explain( $reason ) {
		$why = array(
			'set-cookie'    => __( 'the page sets a cookie (Set-Cookie)', 'ramjet-cache' ),
			'no-ttl'        => __( 'the answer gives no lifetime (no max-age, no TTL)', 'ramjet-cache' ),
			'private'       => __( 'the answer is private (Cache-Control: private)', 'ramjet-cache' ),
			'no-store'      => __( 'the answer says no-store', 'ramjet-cache' ),
			'no-cache'      => __( 'the answer says no-cache (the plugin, or a theme or plugin, chose not to cache it)', 'ramjet-cache' ),
			'cookie'        => __( 'the request carried a cookie, and only a TTL of ramjet\'s would have cached it', 'ramjet-cache' ),
			'bypass'        => __( 'a bypass cookie (a logged-in user, a cart) or caching off', 'ramjet-cache' ),
			'vary-star'     => __( 'the answer varies on everything (Vary: *)', 'ramjet-cache' ),
			'too-large'     => __( 'larger than ramjet\'s largest object', 'ramjet-cache' ),
			'waf'           => __( 'blocked by the firewall (WAF)', 'ramjet-cache' ),
			'method'        => __( 'not a GET or HEAD request', 'ramjet-cache' ),
			'uri-miss'      => __( 'answered uncacheably a moment ago', 'ramjet-cache' ),
			'authorization' => __( 'the request carried credentials (Authorization)', 'ramjet-cache' ),
			'status'        => __( 'a status that is never cached', 'ramjet-cache' ),
			'expired'       => __( 'already expired when it came', 'ramjet-cache' ),
			'htaccess'      => __( 'an .htaccess rule bypasses the cache', 'ramjet-cache' ),
			'request-body'  => __( 'a GET or HEAD with a body', 'ramjet-cache' ),
		);
		return isset( $why[ $reason ] ) ? $why[ $reason ] : $reason;
	}
}
