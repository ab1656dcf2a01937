<?php
/**
 * AdminClient: ramjet's admin API over HTTP.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Calls ramjet's admin listener: POST /purge (JSON body, bearer token)
 * and GET /stats (this site's numbers, with the same token). Any node will do: with Redis fan-out a
 * purge accepted by one node reaches every node.
 */
class AdminClient {

	/** Seconds to wait for ramjet; a purge is one small request. */
	const TIMEOUT = 3;

	/**
	 * Settings with the URL and token.
	 *
	 * @var Settings
	 */
	private $settings;

	/**
	 * A client for the admin URL in $settings.
	 *
	 * @param Settings $settings Settings.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Whether an admin URL is set.
	 *
	 * @return bool
	 */
	public function configured() {
		return '' !== $this->settings->admin_url();
	}

	/**
	 * Purges tags, and URLs given as absolute URLs (sent as paths with the
	 * host field, one request per host).
	 *
	 * @param string[] $tags Tags.
	 * @param string[] $urls Absolute URLs.
	 * @param bool     $all  Purge everything ramjet holds.
	 * @return true|\WP_Error
	 */
	public function purge( array $tags, array $urls, $all = false ) {
		$bodies = array();
		if ( $tags || $all ) {
			$body = array( 'tags' => array_values( $tags ) );
			if ( $all ) {
				$body['all'] = true;
			}
			$bodies[] = $body;
		}
		foreach ( self::paths_by_host( $urls ) as $host => $paths ) {
			$bodies[] = array(
				'urls' => $paths,
				'host' => $host,
			);
		}
		foreach ( $bodies as $body ) {
			$result = $this->request( 'POST', '/purge', wp_json_encode( $body ) );
			if ( is_wp_error( $result ) ) {
				return $result;
			}
		}
		return true;
	}

	/**
	 * This site's numbers from ramjet's GET /stats, read with the site's
	 * token (which reads that site only): the counters since start and
	 * over the last minute, hour and day, what it has cached, and the URLs
	 * answered uncached with the reason.
	 *
	 * @param string $host One of the site's hosts (the operator's token reads any site).
	 * @return array|\WP_Error The site's entry of the answer's "sites".
	 */
	public function site_stats( $host ) {
		$text = $this->request( 'GET', '/stats?host=' . rawurlencode( $host ), null );
		if ( is_wp_error( $text ) ) {
			return $text;
		}
		$data = json_decode( $text, true );
		if ( ! is_array( $data ) || empty( $data['sites'] ) || ! is_array( $data['sites'][0] ) ) {
			return new \WP_Error( 'ramjet_bad_stats', 'ramjet GET /stats: not the stats of one site' );
		}
		return $data['sites'][0];
	}

	/**
	 * Groups absolute URLs by host: host => list of "/path?query".
	 *
	 * @param string[] $urls Absolute URLs (others are skipped).
	 * @return array<string, string[]>
	 */
	public static function paths_by_host( array $urls ) {
		$out = array();
		foreach ( $urls as $url ) {
			$parts = wp_parse_url( $url );
			if ( empty( $parts['host'] ) ) {
				continue;
			}
			$host = $parts['host'] . ( isset( $parts['port'] ) ? ':' . $parts['port'] : '' );
			$path = ( isset( $parts['path'] ) ? $parts['path'] : '/' ) . ( isset( $parts['query'] ) ? '?' . $parts['query'] : '' );

			$out[ strtolower( $host ) ][] = $path;
		}
		return array_map( 'array_values', array_map( 'array_unique', $out ) );
	}

	/**
	 * One request to the admin listener; a non-2xx answer is an error.
	 *
	 * @param string      $method HTTP method.
	 * @param string      $path   Path on the admin listener.
	 * @param string|null $body   JSON body.
	 * @return string|\WP_Error The response body.
	 */
	private function request( $method, $path, $body ) {
		if ( ! $this->configured() ) {
			return new \WP_Error( 'ramjet_not_configured', 'ramjet admin URL is not set (RAMJET_ADMIN_URL)' );
		}
		$args = array(
			'method'  => $method,
			'timeout' => self::TIMEOUT,
			'headers' => array(),
		);
		if ( '' !== $this->settings->admin_token() ) {
			$args['headers']['Authorization'] = 'Bearer ' . $this->settings->admin_token();
		}
		if ( null !== $body ) {
			$args['headers']['Content-Type'] = 'application/json';
			$args['body']                    = $body;
		}
		$response = wp_remote_request( $this->settings->admin_url() . $path, $args );
		if ( is_wp_error( $response ) ) {
			return $response;
		}
		$code = (int) wp_remote_retrieve_response_code( $response );
		$text = (string) wp_remote_retrieve_body( $response );
		if ( $code < 200 || $code > 299 ) {
			return new \WP_Error( 'ramjet_http_' . $code, sprintf( 'ramjet %s %s: HTTP %d: %s', $method, $path, $code, trim( $text ) ) );
		}
		return $text;
	}
}
