<?php
/**
 * Purge: collects what to purge during a request and delivers it once.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Collects purge targets (tags, URLs, the user's private entries) during a
 * request, dedupes them, and delivers them once:
 *
 * - in the response's X-LiteSpeed-Purge header, when ramjet serves this
 *   request and the headers have not gone out (deliver_in_header(), run
 *   by PHP just before it sends the headers);
 * - otherwise at shutdown through ramjet's admin API (cron, WP-CLI, REST
 *   after output, a request that does not come through ramjet);
 * - and if neither can deliver them, into the Queue, which the next
 *   request through ramjet (or the next API call) empties.
 *
 * Private purges ("private, *" on login and logout) only make sense for the
 * requesting client, so they go only in a header and are otherwise dropped.
 */
class Purge {

	/** Response header ramjet reads purges from. */
	const HEADER = 'X-LiteSpeed-Purge';

	/**
	 * Tags to purge, as keys.
	 *
	 * @var array<string, true>
	 */
	private $tags = array();

	/**
	 * Absolute URLs to purge, as keys.
	 *
	 * @var array<string, true>
	 */
	private $urls = array();

	/**
	 * Whether to purge the requesting user's private entries.
	 *
	 * @var bool
	 */
	private $private_all = false;

	/**
	 * The admin API.
	 *
	 * @var AdminClient
	 */
	private $client;

	/**
	 * Undelivered purges.
	 *
	 * @var Queue
	 */
	private $queue;

	/**
	 * Whether response headers of this request reach ramjet.
	 *
	 * @var bool
	 */
	private $header_reaches_proxy;

	/**
	 * Sends one header line (header() in production).
	 *
	 * @var callable
	 */
	private $send_header;

	/**
	 * A collector for one request.
	 *
	 * @param AdminClient $client               Admin API client.
	 * @param Queue       $queue                Queue of undelivered purges.
	 * @param bool        $header_reaches_proxy Whether this request's response goes through ramjet.
	 * @param callable    $send_header          Sends a header line; defaults to header().
	 */
	public function __construct( AdminClient $client, Queue $queue, $header_reaches_proxy, $send_header = null ) {
		$this->client               = $client;
		$this->queue                = $queue;
		$this->header_reaches_proxy = (bool) $header_reaches_proxy;
		$this->send_header          = $send_header ? $send_header : 'header';
	}

	/**
	 * Adds tags.
	 *
	 * @param string[] $tags Tags.
	 */
	public function add_tags( array $tags ) {
		foreach ( $tags as $tag ) {
			$tag = (string) $tag;
			if ( '' !== $tag ) {
				$this->tags[ $tag ] = true;
			}
		}
		/**
		 * Fires after tags were queued for purging in this request.
		 *
		 * @param string[] $tags Tags just added.
		 */
		do_action( 'ramjet_cache_purge_tags', $tags );
	}

	/**
	 * Adds an absolute URL (every variant of it is purged).
	 *
	 * @param string $url Absolute URL.
	 */
	public function add_url( $url ) {
		if ( preg_match( '#^https?://#i', (string) $url ) ) {
			$this->urls[ (string) $url ] = true;
		}
	}

	/**
	 * Purges the requesting user's private entries (login, logout).
	 */
	public function add_private_all() {
		$this->private_all = true;
	}

	/**
	 * Whether anything is waiting to be delivered.
	 *
	 * @return bool
	 */
	public function pending() {
		return $this->tags || $this->urls || $this->private_all;
	}

	/**
	 * Collected tags, deduped, in order.
	 *
	 * @return string[]
	 */
	public function tags() {
		return array_keys( $this->tags );
	}

	/**
	 * Collected URLs, deduped, in order.
	 *
	 * @return string[]
	 */
	public function urls() {
		return array_keys( $this->urls );
	}

	/**
	 * The X-LiteSpeed-Purge value for tags, URLs (as paths) and the private
	 * purge: "private, *; tag1, tag2, /path". '' when there is nothing.
	 *
	 * @param string[] $tags        Tags.
	 * @param string[] $urls        Absolute URLs.
	 * @param bool     $private_all Whether to add the private purge.
	 * @return string
	 */
	public static function header_value( array $tags, array $urls, $private_all ) {
		$groups = array();
		if ( $private_all ) {
			$groups[] = 'private, *';
		}
		$items = $tags;
		foreach ( $urls as $url ) {
			$path  = wp_parse_url( $url, PHP_URL_PATH );
			$query = wp_parse_url( $url, PHP_URL_QUERY );
			if ( is_string( $path ) && '' !== $path ) {
				$items[] = $path . ( is_string( $query ) ? '?' . $query : '' );
			}
		}
		$items = array_values( array_unique( $items ) );
		if ( $items ) {
			$groups[] = implode( ', ', $items );
		}
		return implode( '; ', $groups );
	}

	/**
	 * Puts everything collected so far, and the queue, in the purge header.
	 * Registered with header_register_callback(), so PHP runs it just
	 * before sending the headers; purges added later go out at shutdown.
	 * Does nothing when the response does not reach ramjet.
	 */
	public function deliver_in_header() {
		if ( ! $this->header_reaches_proxy ) {
			return;
		}
		$queued = $this->queue->peek();
		$tags   = array_values( array_unique( array_merge( $queued['tags'], $this->tags() ) ) );
		$urls   = array_values( array_unique( array_merge( $queued['urls'], $this->urls() ) ) );
		$value  = self::header_value( $tags, $urls, $this->private_all );
		if ( '' === $value ) {
			return;
		}
		call_user_func( $this->send_header, self::HEADER . ': ' . $value, false );
		if ( $queued['tags'] || $queued['urls'] ) {
			$this->queue->clear();
		}
		$this->reset();
	}

	/**
	 * Delivers what no header carried: through the admin API, else into the
	 * queue. Runs at shutdown, and directly from WP-CLI.
	 *
	 * @return true|\WP_Error True when delivered (or nothing to do); the API error when queued instead.
	 */
	public function deliver_now() {
		$tags = $this->tags();
		$urls = $this->urls();
		$this->reset();
		if ( ! $tags && ! $urls ) {
			return true;
		}
		if ( ! $this->client->configured() ) {
			$this->queue->add( $tags, $urls );
			return new \WP_Error( 'ramjet_not_configured', 'ramjet admin URL is not set; purge queued for the next request through ramjet' );
		}
		$queued = $this->queue->peek();
		$result = $this->client->purge(
			array_values( array_unique( array_merge( $queued['tags'], $tags ) ) ),
			array_values( array_unique( array_merge( $queued['urls'], $urls ) ) )
		);
		if ( is_wp_error( $result ) ) {
			$this->queue->add( $tags, $urls );
			return $result;
		}
		if ( $queued['tags'] || $queued['urls'] ) {
			$this->queue->clear();
		}
		return true;
	}

	/**
	 * Forgets what was collected.
	 */
	private function reset() {
		$this->tags        = array();
		$this->urls        = array();
		$this->private_all = false;
	}
}
