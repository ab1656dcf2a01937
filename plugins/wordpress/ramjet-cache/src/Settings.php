<?php
/**
 * Settings: the plugin's one option, its defaults, and the wp-config
 * constants that override it.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Reads and sanitises the `ramjet_cache_settings` option.
 *
 * TTLs are seconds; 0 means "do not cache this kind of page". The admin URL
 * and token come from the constants RAMJET_ADMIN_URL and RAMJET_ADMIN_TOKEN
 * when they are defined, else from the option.
 */
class Settings {

	/** Option holding the settings array. */
	const OPTION = 'ramjet_cache_settings';

	/** Option holding purges that could not be sent yet. */
	const QUEUE_OPTION = 'ramjet_cache_purge_queue';

	/**
	 * Page kinds with their own TTL, in the order the settings page shows them.
	 */
	const TTL_KINDS = array( 'front', 'home', 'post', 'page', 'archive', 'feed', 'rest', 'search', '404', 'esi' );

	/**
	 * Stored values merged over the defaults; loaded on first use.
	 *
	 * @var array|null
	 */
	private $values;

	/**
	 * Default values.
	 *
	 * @return array
	 */
	public static function defaults() {
		return array(
			'ttl_front'       => 3600,
			'ttl_home'        => 3600,
			'ttl_post'        => 86400,
			'ttl_page'        => 86400,
			'ttl_archive'     => 3600,
			'ttl_feed'        => 3600,
			'ttl_rest'        => 600,
			'ttl_search'      => 0,
			'ttl_404'         => 300,
			'ttl_esi'         => 3600,
			'exclude_paths'   => array(),
			'exclude_cookies' => array(),
			'admin_url'       => '',
			'admin_token'     => '',
			'proxy'           => 'auto',
			'esi'             => 'auto',
			'esi_admin_bar'   => true,
			'esi_shortcodes'  => array(),
			'esi_widgets'     => array(),
		);
	}

	/**
	 * Optional preset values, for tests; production reads the option.
	 *
	 * @param array|null $values Values to use instead of the stored option.
	 */
	public function __construct( $values = null ) {
		if ( null !== $values ) {
			$this->values = array_merge( self::defaults(), $values );
		}
	}

	/**
	 * One setting.
	 *
	 * @param string $key Setting name, a key of defaults().
	 * @return mixed
	 */
	public function get( $key ) {
		if ( null === $this->values ) {
			$stored       = get_option( self::OPTION, array() );
			$this->values = array_merge( self::defaults(), is_array( $stored ) ? $stored : array() );
		}
		return isset( $this->values[ $key ] ) ? $this->values[ $key ] : null;
	}

	/**
	 * Every setting.
	 *
	 * @return array
	 */
	public function all() {
		$this->get( 'proxy' );
		return $this->values;
	}

	/**
	 * Forget the loaded values, after the option changed.
	 */
	public function reload() {
		$this->values = null;
	}

	/**
	 * TTL in seconds for a page kind (one of TTL_KINDS).
	 *
	 * @param string $kind Page kind.
	 * @return int
	 */
	public function ttl( $kind ) {
		return max( 0, (int) $this->get( 'ttl_' . $kind ) );
	}

	/**
	 * Base URL of ramjet's admin listener, without a trailing slash, or ''.
	 *
	 * @return string
	 */
	public function admin_url() {
		$url = defined( 'RAMJET_ADMIN_URL' ) ? (string) constant( 'RAMJET_ADMIN_URL' ) : (string) $this->get( 'admin_url' );
		return rtrim( $url, '/' );
	}

	/**
	 * Bearer token for the admin API, or ''.
	 *
	 * @return string
	 */
	public function admin_token() {
		return defined( 'RAMJET_ADMIN_TOKEN' ) ? (string) constant( 'RAMJET_ADMIN_TOKEN' ) : (string) $this->get( 'admin_token' );
	}

	/**
	 * Whether a wp-config constant fixes the admin URL or token.
	 *
	 * @param string $key 'admin_url' or 'admin_token'.
	 * @return bool
	 */
	public function is_constant( $key ) {
		return defined( 'admin_url' === $key ? 'RAMJET_ADMIN_URL' : 'RAMJET_ADMIN_TOKEN' );
	}

	/**
	 * Cleans a submitted settings array (the settings page's sanitize
	 * callback). Unknown keys are dropped.
	 *
	 * @param mixed $input Submitted values.
	 * @return array
	 */
	public static function sanitize( $input ) {
		$input = is_array( $input ) ? $input : array();
		$out   = self::defaults();
		foreach ( self::TTL_KINDS as $kind ) {
			if ( isset( $input[ 'ttl_' . $kind ] ) ) {
				$out[ 'ttl_' . $kind ] = max( 0, (int) $input[ 'ttl_' . $kind ] );
			}
		}
		foreach ( array( 'exclude_paths', 'exclude_cookies', 'esi_shortcodes', 'esi_widgets' ) as $key ) {
			if ( isset( $input[ $key ] ) ) {
				$out[ $key ] = self::lines( $input[ $key ] );
			}
		}
		if ( isset( $input['admin_url'] ) ) {
			$url              = trim( (string) $input['admin_url'] );
			$out['admin_url'] = preg_match( '#^https?://[^\s/]+(/\S*)?$#', $url ) ? rtrim( $url, '/' ) : '';
		}
		if ( isset( $input['admin_token'] ) ) {
			$out['admin_token'] = preg_replace( '/[^\x21-\x7e]/', '', (string) $input['admin_token'] );
		}
		foreach ( array( 'proxy', 'esi' ) as $key ) {
			if ( isset( $input[ $key ] ) && in_array( $input[ $key ], array( 'auto', 'on', 'off' ), true ) ) {
				$out[ $key ] = $input[ $key ];
			}
		}
		$out['esi_admin_bar'] = ! empty( $input['esi_admin_bar'] );
		return $out;
	}

	/**
	 * Splits a textarea (or keeps a list) into trimmed, non-empty, unique lines.
	 *
	 * @param string|array $value Newline-separated text or a list.
	 * @return string[]
	 */
	public static function lines( $value ) {
		$items = is_array( $value ) ? $value : preg_split( '/[\r\n,]+/', (string) $value );
		$items = array_map(
			static function ( $item ) {
				return preg_replace( '/[\x00-\x20\x7f]/', '', (string) $item );
			},
			$items
		);
		return array_values( array_unique( array_filter( $items, 'strlen' ) ) );
	}
}
